package io.disco.testservers;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A null walk over a public API, for tests: {@link #walk} calls every public method of a type
 * declared in an {@code io.disco.} package (the statics and constructors when given no instance, the
 * instance methods when given one) by reflection, with null in each reference parameter in turn and
 * sample values in the others, and records a problem unless the call throws a {@link
 * NullPointerException} or {@link IllegalArgumentException} whose message contains the parameter's
 * name, at once: a call still running after 5 s (it waited) or returning a {@link Future} (an async
 * method must throw before it starts) is a problem too. Each call runs on its own daemon thread.
 *
 * <p>Left out: {@code equals}, bridge and synthetic methods, primitive parameters, the constructors of
 * interfaces, abstract classes and exceptions (a null message or cause is theirs to take), the
 * methods named in {@link #skipMethods} and the parameters named in {@link #allowNull}. The classes
 * must be compiled with {@code -parameters}: a parameter without a name fails the walk.
 *
 * <p>Sample values: strings from the given supplier; {@code int}, {@code long}, {@code boolean} and
 * their boxes 1, 1 and false; an enum its first constant; then the given map by exact type; then, for an
 * interface, a proxy whose methods do nothing and return false, 0 or null. Any other type fails the
 * walk with an {@link AssertionError} naming it. Not thread-safe: one walker per test.
 */
public final class NullArguments {

    private static final long TIMEOUT_SECONDS = 5;

    private final Map<Class<?>, Object> samples;
    private final Supplier<String> strings;
    private final List<String> problems = new ArrayList<>();
    private Set<String> skippedMethods = Set.of();
    private Set<String> nullable = Set.of();
    private int calls;

    /**
     * A walker with no problems found yet.
     *
     * @param samples the value to pass for a parameter of each type (looked up by exact type); not null
     * @param strings gives the value of each {@code String} parameter, called once per argument; not null
     */
    public NullArguments(Map<Class<?>, Object> samples, Supplier<String> strings) {
        this.samples = Objects.requireNonNull(samples, "samples");
        this.strings = Objects.requireNonNull(strings, "strings");
    }

    /**
     * Leaves out the methods of these names in every type walked (e.g. the ones only a container calls).
     *
     * @param names method names; not null
     * @return this walker
     */
    public NullArguments skipMethods(Set<String> names) {
        this.skippedMethods = Set.copyOf(Objects.requireNonNull(names, "names"));
        return this;
    }

    /**
     * Leaves out the parameters documented to take null, each written {@code Type#method.parameter}
     * ({@code Type#Type.parameter} for a constructor; {@code Type} the simple name of the walked type).
     *
     * @param parameters the parameters whose null has a meaning; not null
     * @return this walker
     */
    public NullArguments allowNull(Set<String> parameters) {
        this.nullable = Set.copyOf(Objects.requireNonNull(parameters, "parameters"));
        return this;
    }

    /**
     * Calls each public static method and constructor of {@code type} (when {@code instance} is null),
     * or each public instance method on {@code instance}, with null in each reference parameter in turn,
     * adding what went wrong to {@link #problems()}.
     *
     * @param type the type whose public API is walked; not null
     * @param instance the instance to call the methods on, or null to walk the statics and constructors
     * @throws InterruptedException if interrupted while waiting for a call
     * @throws AssertionError if a parameter has no name or no sample value can be made for it
     */
    public void walk(Class<?> type, Object instance) throws InterruptedException {
        Objects.requireNonNull(type, "type");
        List<Executable> targets = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.getDeclaringClass().getName().startsWith("io.disco.")
                    && !m.isBridge()
                    && !m.isSynthetic()
                    && Modifier.isStatic(m.getModifiers()) == (instance == null)
                    && !m.getName().equals("equals")
                    && !skippedMethods.contains(m.getName())) {
                targets.add(m);
            }
        }
        if (instance == null && !Throwable.class.isAssignableFrom(type) && !Modifier.isAbstract(type.getModifiers())) {
            targets.addAll(Arrays.asList(type.getConstructors()));
        }
        for (Executable x : targets) {
            Parameter[] params = x.getParameters();
            for (int i = 0; i < params.length; i++) {
                if (params[i].getType().isPrimitive()) {
                    continue;
                }
                String where = type.getSimpleName() + "#"
                        + (x instanceof Constructor ? type.getSimpleName() : x.getName()) + "." + params[i].getName();
                if (nullable.contains(where)) {
                    continue;
                }
                if (!params[i].isNamePresent()) {
                    throw new AssertionError("compile with -parameters: no name for " + where);
                }
                Object[] args = new Object[params.length];
                for (int j = 0; j < params.length; j++) {
                    args[j] = j == i ? null : sample(params[j]);
                }
                calls++;
                check(where, params[i].getName(), x, instance, args);
            }
        }
    }

    /**
     * What the walks found wrong so far, one line each ({@code Type#method.parameter(null): what happened}).
     *
     * @return an unmodifiable copy; empty if every call threw as it should
     */
    public List<String> problems() {
        return List.copyOf(problems);
    }

    /**
     * How many calls with a null argument the walks made so far.
     *
     * @return the number of calls
     */
    public int calls() {
        return calls;
    }

    private Object sample(Parameter p) {
        Class<?> type = p.getType();
        if (type == String.class) {
            return strings.get();
        }
        if (type == int.class || type == Integer.class) {
            return 1;
        }
        if (type == long.class || type == Long.class) {
            return 1L;
        }
        if (type == boolean.class || type == Boolean.class) {
            return false;
        }
        if (type.isEnum()) {
            return type.getEnumConstants()[0];
        }
        if (samples.containsKey(type)) {
            return samples.get(type);
        }
        if (type.isInterface()) {
            return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                if (m.getName().equals("toString")) {
                    return "a " + type.getSimpleName();
                }
                Class<?> r = m.getReturnType();
                return r == boolean.class ? false : r == int.class || r == long.class ? 0 : null;
            });
        }
        throw new AssertionError("no sample value of " + type.getName() + " for " + p);
    }

    private void check(String where, String name, Executable x, Object instance, Object[] args)
            throws InterruptedException {
        FutureTask<Object> call = new FutureTask<>(() -> {
            try {
                Object r = x instanceof Method m ? m.invoke(instance, args) : ((Constructor<?>) x).newInstance(args);
                return r instanceof Future<?> ? r : r == null ? "returned null" : "returned " + r;
            } catch (InvocationTargetException e) {
                return e.getCause();
            }
        });
        Thread t = new Thread(call, "null-argument-call");
        t.setDaemon(true);
        t.start();
        Object outcome;
        try {
            outcome = call.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            problems.add(where + "(null): still waiting after " + TIMEOUT_SECONDS + " s");
            return;
        } catch (ExecutionException e) {
            throw new AssertionError(where, e);
        }
        if (!(outcome instanceof NullPointerException || outcome instanceof IllegalArgumentException)) {
            problems.add(where + "(null): "
                    + (outcome instanceof Throwable e
                            ? "threw " + e
                            : outcome instanceof Future<?>
                                    ? "returned a future (an async method must throw at once)"
                                    : outcome));
            if (outcome instanceof Future<?> f) {
                f.cancel(true);
            }
            return;
        }
        String message = ((Throwable) outcome).getMessage();
        if (message == null || !message.contains(name)) {
            problems.add(where + "(null): " + outcome + " does not name the parameter '" + name + "'");
        }
    }
}

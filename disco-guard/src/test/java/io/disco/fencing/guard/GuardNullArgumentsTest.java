package io.disco.fencing.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard module's part of the null walk ({@code NullArgumentsTest} in the provider does the
 * others): every public method and constructor of {@link Guard}, its builder, {@link KeyedGuard},
 * {@link GuardStore}, {@link GuardFilter} and {@link GuardServerInterceptor} is called with null in
 * each reference parameter in turn (the others valid) and must throw a {@link NullPointerException}
 * or {@link IllegalArgumentException} naming the parameter, at once, changing nothing (the guards'
 * marks stay where they were). Left out: the methods a servlet container or gRPC calls
 * ({@code init}, {@code doFilter}, {@code interceptCall}), which never pass null.
 */
class GuardNullArgumentsTest {

    /** Called by the container or the gRPC server, never by users. */
    private static final Set<String> FRAMEWORK = Set.of("init", "doFilter", "destroy", "interceptCall");

    private final List<String> problems = new ArrayList<>();
    private int calls;

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter(@TempDir Path dir) throws Exception {
        FencingToken token = FencingToken.of(7);
        Map<Class<?>, Object> samples = new LinkedHashMap<>();
        samples.put(FencingToken.class, token);
        samples.put(Duration.class, Duration.ofSeconds(1));
        samples.put(Path.class, dir.resolve("marks"));
        samples.put(Guard.class, Guard.withInitialToken(token));
        samples.put(KeyedGuard.class, KeyedGuard.create());

        Guard guard = Guard.withInitialToken(token);
        KeyedGuard keyed = KeyedGuard.create();
        keyed.forKey("k").check(token);
        for (Class<?> type : List.of(Guard.class, Guard.Builder.class, KeyedGuard.class, GuardStore.class, GuardFilter.class,
                GuardServerInterceptor.class)) {
            walk(type, null, samples);
        }
        Map<Class<?>, Object> instances = new LinkedHashMap<>();
        instances.put(Guard.class, guard);
        instances.put(Guard.Builder.class, Guard.builder());
        instances.put(KeyedGuard.class, keyed);
        instances.put(GuardStore.class, GuardStore.file(dir.resolve("store")));
        for (Map.Entry<Class<?>, Object> e : instances.entrySet()) {
            walk(e.getKey(), e.getValue(), samples);
        }

        // Nothing changed: the marks are where they were, and the guards still work.
        if (!guard.highWater().equals(Optional.of(token))) {
            problems.add("the guard's mark moved: " + guard.highWater());
        }
        if (keyed.size() != 1 || !keyed.forKey("k").highWater().equals(Optional.of(token))) {
            problems.add("the keyed guard changed: " + keyed);
        }
        System.out.println(calls + " calls with a null argument; " + problems.size() + " problems");
        assertEquals(List.of(), problems, String.join("\n  ", problems));
        assertEquals(FencingToken.of(8), guard.check(FencingToken.of(8)));
        assertTrue(calls > 15, "the walk reached the API: " + calls + " calls");
    }

    private Object sample(Parameter p, Map<Class<?>, Object> samples) {
        Class<?> type = p.getType();
        if (type == String.class) {
            return "key";
        }
        if (type == long.class) {
            return 1L;
        }
        if (type == int.class) {
            return 1;
        }
        if (type == boolean.class) {
            return false;
        }
        if (samples.containsKey(type)) {
            return samples.get(type);
        }
        if (type.isInterface()) {
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                Class<?> r = m.getReturnType();
                return r == boolean.class ? false : r == int.class || r == long.class ? 0 : null;
            });
        }
        throw new AssertionError("no sample value of " + type.getName() + " for " + p);
    }

    private void walk(Class<?> type, Object instance, Map<Class<?>, Object> samples) throws Exception {
        List<Executable> targets = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.getDeclaringClass().getName().startsWith("io.disco.") && !m.isBridge() && !m.isSynthetic()
                    && Modifier.isStatic(m.getModifiers()) == (instance == null) && !m.getName().equals("equals")
                    && !FRAMEWORK.contains(m.getName())) {
                targets.add(m);
            }
        }
        if (instance == null && !type.isInterface()) {
            targets.addAll(Arrays.asList(type.getConstructors()));
        }
        for (Executable x : targets) {
            Parameter[] params = x.getParameters();
            for (int i = 0; i < params.length; i++) {
                if (params[i].getType().isPrimitive()) {
                    continue;
                }
                String where = type.getSimpleName() + "#" + (x instanceof Constructor ? type.getSimpleName() : x.getName())
                        + "." + params[i].getName();
                if (!params[i].isNamePresent()) {
                    throw new AssertionError("compile with -parameters: no name for " + where);
                }
                Object[] args = new Object[params.length];
                for (int j = 0; j < params.length; j++) {
                    args[j] = j == i ? null : sample(params[j], samples);
                }
                calls++;
                check(where, params[i].getName(), x, instance, args);
            }
        }
    }

    private void check(String where, String name, Executable x, Object instance, Object[] args) throws Exception {
        FutureTask<Object> call = new FutureTask<>(() -> {
            try {
                Object r = x instanceof Method m ? m.invoke(instance, args) : ((Constructor<?>) x).newInstance(args);
                return "returned " + r;
            } catch (InvocationTargetException e) {
                return e.getCause();
            }
        });
        Thread t = new Thread(call, "null-argument-call");
        t.setDaemon(true);
        t.start();
        Object outcome;
        try {
            outcome = call.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            problems.add(where + "(null): still waiting after 5 s");
            return;
        }
        if (!(outcome instanceof NullPointerException || outcome instanceof IllegalArgumentException)) {
            problems.add(where + "(null): " + (outcome instanceof Throwable e ? "threw " + e : outcome));
            return;
        }
        String message = ((Throwable) outcome).getMessage();
        if (message == null || !message.contains(name)) {
            problems.add(where + "(null): " + outcome + " does not name the parameter '" + name + "'");
        }
    }
}

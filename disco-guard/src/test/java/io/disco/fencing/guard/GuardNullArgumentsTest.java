package io.disco.fencing.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.testservers.NullArguments;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard module's part of the null walk ({@code NullArgumentsTest} in the provider does the
 * others): every public method and constructor of {@link Guard}, its builder, {@link KeyedGuard},
 * {@link GuardStore}, {@link GuardFilter} and {@link GuardServerInterceptor} is called with null in
 * each reference parameter in turn (the others valid) and must throw a {@link NullPointerException}
 * or {@link IllegalArgumentException} naming the parameter, at once, changing nothing (the guards'
 * marks stay where they were). Left out: the methods a servlet container or gRPC calls
 * ({@code init}, {@code doFilter}, {@code interceptCall}), which never pass null. The walk itself is
 * {@link NullArguments}.
 */
class GuardNullArgumentsTest {

    /** Called by the container or the gRPC server, never by users. */
    private static final Set<String> FRAMEWORK = Set.of("init", "doFilter", "destroy", "interceptCall");

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter(@TempDir Path dir) throws Exception {
        FencingToken token = FencingToken.of(7);
        Map<Class<?>, Object> samples = new LinkedHashMap<>();
        samples.put(FencingToken.class, token);
        samples.put(Duration.class, Duration.ofSeconds(1));
        samples.put(Path.class, dir.resolve("marks"));
        samples.put(Guard.class, Guard.withInitialToken(token));
        samples.put(KeyedGuard.class, KeyedGuard.create());
        NullArguments nulls = new NullArguments(samples, () -> "key").skipMethods(FRAMEWORK);

        Guard guard = Guard.withInitialToken(token);
        KeyedGuard keyed = KeyedGuard.create();
        keyed.forKey("k").check(token);
        for (Class<?> type : List.of(
                Guard.class,
                Guard.Builder.class,
                KeyedGuard.class,
                GuardStore.class,
                GuardFilter.class,
                GuardServerInterceptor.class)) {
            nulls.walk(type, null);
        }
        Map<Class<?>, Object> instances = new LinkedHashMap<>();
        instances.put(Guard.class, guard);
        instances.put(Guard.Builder.class, Guard.builder());
        instances.put(KeyedGuard.class, keyed);
        instances.put(GuardStore.class, GuardStore.file(dir.resolve("store")));
        for (Map.Entry<Class<?>, Object> e : instances.entrySet()) {
            nulls.walk(e.getKey(), e.getValue());
        }
        List<String> problems = new ArrayList<>(nulls.problems());
        int calls = nulls.calls();

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
}

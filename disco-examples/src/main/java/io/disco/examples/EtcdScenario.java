package io.disco.examples;

import java.util.List;
import java.util.function.Function;

/**
 * A scenario run on etcd, as each example's {@code run(endpoints, ...)} runs its own: a {@link DemoBackend#etcd DemoBackend}
 * connected to the endpoints, the scenario run on it, the backend closed. A scenario reports its own failed steps
 * in its outcome; what fails around it (etcd cannot be reached) becomes its failed outcome too, saying
 * {@code connect to etcd <endpoints>: <the exception>}.
 */
public final class EtcdScenario {

    private EtcdScenario() {}

    /**
     * Runs {@code scenario} on etcd at {@code endpoints}.
     *
     * @param endpoints etcd client URLs
     * @param scenario the scenario, on the connected backend
     * @param failed the scenario's outcome when it could not run, from what failed
     * @param <T> the scenario's outcome
     * @return what the scenario returned, or {@code failed}'s outcome
     */
    public static <T> T run(List<String> endpoints, Function<DemoBackend, T> scenario, Function<String, T> failed) {
        try (DemoBackend backend = DemoBackend.etcd(endpoints)) {
            return scenario.apply(backend);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return failed.apply("connect to etcd " + endpoints + ": " + e);
        }
    }
}

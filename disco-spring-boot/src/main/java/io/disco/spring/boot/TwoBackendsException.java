package io.disco.spring.boot;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The application configures two backends (or three) at once, among etcd, ZooKeeper and Redis
 * ({@link ConfiguredBackends}): a {@code Disco} runs on one. Boot's failure analysis ({@link TwoBackendsFailureAnalyzer})
 * reports it.
 */
final class TwoBackendsException extends IllegalStateException {

    private final Map<String, List<String>> configured;

    /**
     * @param configured each backend configured (its name: {@code etcd}, {@code ZooKeeper}, {@code Redis}), in order,
     *     with what configures it; two or more
     */
    TwoBackendsException(Map<String, List<String>> configured) {
        super("disco is configured for " + configured.size() + " backends, "
                + configured.entrySet().stream()
                        .map(e -> e.getKey() + " (" + String.join("; ", e.getValue()) + ")")
                        .collect(Collectors.joining(" and "))
                + ": configure one");
        Map<String, List<String>> copy = new LinkedHashMap<>();
        configured.forEach((backend, what) -> copy.put(backend, List.copyOf(what)));
        this.configured = Collections.unmodifiableMap(copy);
    }

    /** @return each backend configured, in order, with what configures it */
    Map<String, List<String>> configured() {
        return configured;
    }
}

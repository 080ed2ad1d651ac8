package io.disco.spring.boot;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Boot's failure analysis of an application that configures two backends at once, among etcd, ZooKeeper and Redis
 * ({@link TwoBackendsException}): the "APPLICATION FAILED TO START" report names what configures each and how to keep
 * one. Registered in {@code META-INF/spring.factories}.
 */
class TwoBackendsFailureAnalyzer extends AbstractFailureAnalyzer<TwoBackendsException> {

    /** How to take each backend's configuration away, or out of the choice. */
    private static final Map<String, String> HOW_TO_DROP = Map.of(
            "etcd",
            "remove disco.etcd.endpoints (and the application's jetcd Client or EtcdConnectionDetails bean, if disco is"
                    + " to use it), or set disco.etcd.enabled=false to leave such beans to other uses",
            "ZooKeeper",
            "remove disco.zookeeper.connect-string, or set disco.zookeeper.enabled=false when the CuratorFramework bean"
                    + " is there for something else",
            "Redis",
            "remove the disco.redis.* properties, or set disco.redis.enabled=false (the application's Redis"
                    + " connection, spring.data.redis.*, stays its own)");

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TwoBackendsException cause) {
        Map<String, List<String>> configured = cause.configured();
        String description = "disco is configured for " + (configured.size() == 2 ? "two" : "three")
                + " backends at once, and a disco client runs on one.\n\n"
                + configured.entrySet().stream()
                        .map(e -> e.getKey() + ": " + String.join("; ", e.getValue()))
                        .collect(Collectors.joining("\n"));
        List<String> keep = new ArrayList<>();
        for (String backend : configured.keySet()) {
            String others = configured.keySet().stream()
                    .filter(b -> !b.equals(backend))
                    .map(HOW_TO_DROP::get)
                    .collect(Collectors.joining("; and "));
            keep.add("For " + backend + ", " + others + ".");
        }
        return new FailureAnalysis(description, "Configure one backend. " + String.join(" ", keep), cause);
    }
}

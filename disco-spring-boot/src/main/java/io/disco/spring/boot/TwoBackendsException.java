package io.disco.spring.boot;

import java.util.List;

/**
 * The application configures two backends at once, etcd and ZooKeeper ({@link ConfiguredBackends}): a
 * {@code Disco} runs on one. Boot's failure analysis ({@link TwoBackendsFailureAnalyzer}) reports it.
 */
final class TwoBackendsException extends IllegalStateException {

    private final List<String> etcd;
    private final List<String> zooKeeper;

    /**
     * @param etcd what configures etcd, at least one
     * @param zooKeeper what configures ZooKeeper, at least one
     */
    TwoBackendsException(List<String> etcd, List<String> zooKeeper) {
        super("disco is configured for two backends, etcd (" + String.join("; ", etcd) + ") and ZooKeeper ("
                + String.join("; ", zooKeeper) + "): configure one");
        this.etcd = List.copyOf(etcd);
        this.zooKeeper = List.copyOf(zooKeeper);
    }

    /** @return what configures etcd */
    List<String> etcd() {
        return etcd;
    }

    /** @return what configures ZooKeeper */
    List<String> zooKeeper() {
        return zooKeeper;
    }
}

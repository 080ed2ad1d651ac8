package io.disco.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The requests the in-process ZooKeeper server received, as it counts them itself (its JMX attribute
 * {@code PacketsReceived}): every request of every client, the sessions' pings included (one per session every third
 * of its timeout, a handful per second here). A {@link Contention.Window} that reads them around a run.
 */
final class ZooKeeperPackets implements Contention.Window {

    private long before;
    private long after;

    /** @return the packets the server of this JVM has received so far */
    static long received() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(new ObjectName("org.apache.ZooKeeperService:name0=*"), null);
        if (names.size() != 1) {
            throw new IllegalStateException("expected one ZooKeeper server's MBean in this JVM, found " + names);
        }
        return ((Number) server.getAttribute(names.iterator().next(), "PacketsReceived")).longValue();
    }

    @Override
    public void started() throws Exception {
        before = received();
    }

    @Override
    public void ended() throws Exception {
        after = received();
    }

    /** @return the packets received during the run, per acquisition of {@code result} */
    double perAcquisition(Contention.Result result) {
        return (after - before) / (double) result.acquisitions();
    }
}

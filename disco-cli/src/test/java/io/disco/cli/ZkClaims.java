package io.disco.cli;

import static org.awaitility.Awaitility.await;

import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * What the ZooKeeper tests of the tool claim with and read: this library's sessions and Curator's recipes, each on a
 * client (a ZooKeeper session) of its own, on the server of a test class's {@link ZooKeeperExtension}; {@link #close}
 * closes them all, the newest first.
 */
final class ZkClaims implements AutoCloseable {

    private final ZooKeeperExtension zk;
    private final List<AutoCloseable> open = new ArrayList<>();
    private CuratorFramework admin;

    ZkClaims(ZooKeeperExtension zk) {
        this.zk = zk;
    }

    static String name(String what) {
        return "/test/cli-zk/" + what + "/" + UUID.randomUUID();
    }

    /** A started client of its own (a session of its own), connected. */
    CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(zk.connectString())
                .ensembleTracker(false)
                .sessionTimeoutMs(20_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        open.add(c);
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to the test's ZooKeeper at " + zk.connectString());
        }
        return c;
    }

    /** A session of this library on a client of its own. */
    ZooKeeperSession session() throws InterruptedException {
        ZooKeeperSession s = ZooKeeperSession.open(
                client(),
                ZooKeeperOptions.builder()
                        .connectTimeout(Duration.ofSeconds(10))
                        .requestTimeout(Duration.ofSeconds(10))
                        .build());
        open.add(s);
        return s;
    }

    /** Closes {@code resource} with the others (a recipe that must go before its client). */
    <T extends AutoCloseable> T closing(T resource) {
        open.add(resource);
        return resource;
    }

    /** The tests' own client, for reads. */
    CuratorFramework admin() throws InterruptedException {
        if (admin == null) {
            admin = client();
        }
        return admin;
    }

    /** @return the session id of {@code c}, in hex: the {@code LEASE} column of its nodes */
    static String hex(CuratorFramework c) throws Exception {
        return Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
    }

    /** @return the children of {@code dir} as full paths, in sequence order (Curator's names end in the sequence) */
    List<String> queue(String dir) throws Exception {
        List<String> children;
        try {
            children = admin().getChildren().forPath(dir);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        return children.stream()
                .filter(c -> c.matches(".*\\d{10}$"))
                .sorted((a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10)))
                .map(c -> dir + "/" + c)
                .toList();
    }

    /** Waits (at most {@code wait}) until {@code dir} holds {@code n} queue nodes; returns them in queue order. */
    List<String> awaitQueue(String dir, int n, Duration wait) {
        await().atMost(wait).until(() -> queue(dir).size() == n);
        try {
            return queue(dir);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the stat of {@code path}, or null when it does not exist */
    Stat stat(String path) throws Exception {
        return admin().checkExists().forPath(path);
    }

    @Override
    public void close() {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                // a recipe or session that failed to close: its client's close ends its session anyway
            }
        }
        open.clear();
    }
}

package io.disco.testservers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * One throwaway ZooKeeper server in this JVM (Curator's {@code TestingServer}) on a free loopback port, with a
 * temporary data directory: nothing needs to be installed (add {@code org.apache.curator:curator-test} to the
 * classpath). For tests through {@link ZooKeeperExtension}, and for tools that need a ZooKeeper without one
 * installed ({@code ./demo --backend zookeeper}, {@code ./bench}'s ZooKeeper case).
 *
 * <pre>{@code
 * try (ZooKeeperServer zk = ZooKeeperServer.start()) {
 *     CuratorFrameworkFactory.newClient(zk.connectString(), ...)
 * }
 * }</pre>
 *
 * <p>The server ticks every {@value #TICK_MS} ms, so sessions may be as short as {@code 2 * tick} and as long as
 * {@value #MAX_SESSION_MS} ms, and an expired session ends within a tick of its timeout. It takes any number of
 * connections from one address (ZooKeeper's default is 60; a client is a connection). It does not fsync its
 * log ({@code zookeeper.forceSync=no}, a system property of the JVM, as the etcd members of the tests run with
 * {@code --unsafe-no-fsync}): a crash of the machine may lose its data.
 */
public final class ZooKeeperServer implements AutoCloseable {

    /** The server's tick: the granularity of session expiry. */
    public static final int TICK_MS = 100;
    /** The longest session the server grants. */
    public static final int MAX_SESSION_MS = 60_000;

    private final TestingServer testing;
    private final File dataDir;
    private final String connectString;

    private ZooKeeperServer(TestingServer testing, File dataDir) {
        this.testing = testing;
        this.dataDir = dataDir;
        this.connectString = "127.0.0.1:" + testing.getPort();
    }

    /**
     * Starts a server and waits until it serves.
     *
     * @return the running server; close it to stop it
     * @throws UncheckedIOException if its data directory could not be made
     * @throws IllegalStateException if it did not start
     */
    public static ZooKeeperServer start() {
        // ZooKeeper's forceSync is read when the server starts; without fsync writes are several times faster.
        System.setProperty("zookeeper.forceSync", "no");
        try {
            File dir = Files.createTempDirectory("disco-zookeeper").toFile();
            InstanceSpec spec = new InstanceSpec(
                    dir,
                    -1,
                    -1,
                    -1,
                    true,
                    -1,
                    TICK_MS,
                    -1,
                    Map.of(
                            "minSessionTimeout",
                            String.valueOf(2 * TICK_MS),
                            "maxSessionTimeout",
                            String.valueOf(MAX_SESSION_MS),
                            "maxClientCnxns",
                            "0"),
                    "127.0.0.1");
            return new ZooKeeperServer(new TestingServer(spec, true), dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException("the in-process ZooKeeper server did not start", e);
        }
    }

    /** @return the connect string, {@code 127.0.0.1:<port>} */
    public String connectString() {
        return connectString;
    }

    /** Stops the server and deletes its data directory. */
    @Override
    public void close() throws IOException {
        testing.close();
    }

    @Override
    public String toString() {
        return "in-process ZooKeeper at " + connectString + " (" + dataDir + ")";
    }
}

package io.disco.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs one in-process ZooKeeper server (Curator's {@code TestingServer}) for every
 * class of the test run that registers it: the first class starts it, every later one uses it, and it stops
 * when the run ends (JUnit's root store). Nothing needs to be installed: the server runs in the test's JVM
 * (add {@code org.apache.curator:curator-test} to the test classpath).
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();
 * ... CuratorFrameworkFactory.newClient(ZK.connectString(), ...)
 * }</pre>
 *
 * <p>The server ticks every {@value #TICK_MS} ms, so sessions may be as short as {@code 2 * tick} and as
 * long as {@value #MAX_SESSION_MS} ms, and an expired session ends within a tick of its timeout. Tests on it
 * use paths of their own and never stop it. The server does not fsync its log ({@code zookeeper.forceSync=no},
 * a system property of the test JVM): a crash of the machine may lose its data, which no test survives anyway.
 */
public final class ZooKeeperExtension implements BeforeAllCallback {

    /** The server's tick: the granularity of session expiry. */
    public static final int TICK_MS = 100;
    /** The longest session the server grants. */
    public static final int MAX_SESSION_MS = 60_000;

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(ZooKeeperExtension.class, "shared");

    private volatile Server server;

    private ZooKeeperExtension() {
    }

    /**
     * Returns an extension on the server shared by the whole test run.
     *
     * @return a new extension
     */
    public static ZooKeeperExtension sharedServer() {
        return new ZooKeeperExtension();
    }

    /**
     * Starts the shared server unless an earlier class did.
     *
     * @param context the JUnit context of the test class
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        server = context.getRoot().getStore(SHARED).getOrComputeIfAbsent("server", k -> Server.start(), Server.class);
    }

    /**
     * The connect string of the running server, {@code 127.0.0.1:<port>}.
     *
     * @return the connect string
     * @throws IllegalStateException before {@code beforeAll}
     */
    public String connectString() {
        Server current = server;
        if (current == null) {
            throw new IllegalStateException("the ZooKeeper server is not running: register ZooKeeperExtension on a"
                    + " static field with @RegisterExtension and use it from tests of that class");
        }
        return current.connectString;
    }

    /** The running server; closed by JUnit when the run ends. */
    private static final class Server implements ExtensionContext.Store.CloseableResource, AutoCloseable {

        private final TestingServer testing;
        private final File dataDir;
        final String connectString;

        private Server(TestingServer testing, File dataDir) {
            this.testing = testing;
            this.dataDir = dataDir;
            this.connectString = "127.0.0.1:" + testing.getPort();
        }

        static Server start() {
            // A throwaway server: no fsync of its transaction log (ZooKeeper's forceSync, read when the server
            // starts), as the etcd members of the tests run without one; writes are several times faster.
            System.setProperty("zookeeper.forceSync", "no");
            try {
                File dir = Files.createTempDirectory("disco-zookeeper").toFile();
                InstanceSpec spec = new InstanceSpec(dir, -1, -1, -1, true, -1, TICK_MS, -1,
                        Map.of("minSessionTimeout", String.valueOf(2 * TICK_MS), "maxSessionTimeout", String.valueOf(MAX_SESSION_MS)), "127.0.0.1");
                return new Server(new TestingServer(spec, true), dir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (Exception e) {
                throw new IllegalStateException("the in-process ZooKeeper server did not start", e);
            }
        }

        @Override
        public void close() throws IOException {
            testing.close();
        }

        @Override
        public String toString() {
            return "ZooKeeper at " + connectString + " (" + dataDir + ")";
        }
    }
}

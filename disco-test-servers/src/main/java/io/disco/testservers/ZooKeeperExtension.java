package io.disco.testservers;

import java.io.IOException;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs one in-process ZooKeeper server ({@link ZooKeeperServer}) for every
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
    public static final int TICK_MS = ZooKeeperServer.TICK_MS;
    /** The longest session the server grants. */
    public static final int MAX_SESSION_MS = ZooKeeperServer.MAX_SESSION_MS;

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(ZooKeeperExtension.class, "shared");

    private volatile Server server;

    private ZooKeeperExtension() {}

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

        private final ZooKeeperServer server;
        final String connectString;

        private Server(ZooKeeperServer server) {
            this.server = server;
            this.connectString = server.connectString();
        }

        static Server start() {
            return new Server(ZooKeeperServer.start());
        }

        @Override
        public void close() throws IOException {
            server.close();
        }

        @Override
        public String toString() {
            return server.toString();
        }
    }
}

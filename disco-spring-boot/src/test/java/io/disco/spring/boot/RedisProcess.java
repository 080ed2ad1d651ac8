package io.disco.spring.boot;

import io.disco.testservers.RedisServer;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A {@code redis-server} process for the application tests that take their backend away: one for the whole test run,
 * started by the first class that registers it and closed when the run ends (JUnit's root store), as
 * {@link ZooKeeperProcess} is for ZooKeeper. A test that kills it starts it again before it returns
 * ({@link #restart()} waits until it answers, with its append-only file: every token issued before is kept). The
 * shared server ({@code RedisExtension.sharedServer()}) serves every other test: it is never stopped.
 */
final class RedisProcess implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(RedisProcess.class);

    private volatile Server server;

    @Override
    public void beforeAll(ExtensionContext context) {
        server = context.getRoot().getStore(SHARED).computeIfAbsent("server", k -> new Server(), Server.class);
    }

    /** Boot's connection to this server, and nothing else: {@code spring.data.redis.host} and {@code port}. */
    void connection(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.host", () -> running().redis.host());
        properties.add("spring.data.redis.port", () -> running().redis.port());
    }

    /** Kills the server (SIGKILL) and waits for its process to exit. */
    void kill() {
        running().redis.kill();
    }

    /** Starts the server again on its port with its data, and waits until it answers. */
    void restart() {
        running().redis.restart();
    }

    private Server running() {
        Server s = server;
        if (s == null) {
            throw new IllegalStateException("register RedisProcess on a static field with @RegisterExtension");
        }
        return s;
    }

    /** The server process; closed when the run ends. */
    private static final class Server implements AutoCloseable {

        final RedisServer redis = RedisServer.start();

        @Override
        public void close() {
            redis.close();
        }
    }
}

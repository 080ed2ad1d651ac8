package io.disco.spring.boot;

import io.disco.testservers.ZooKeeperEnsemble;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A ZooKeeper server in a process of its own (a {@link ZooKeeperEnsemble} of one member), for the application tests
 * that take their backend away: one for the whole test run, started by the first class that registers it and
 * closed when the run ends (JUnit's root store), as etcd's single member is stopped and started again. A test that
 * kills it starts it again before it returns ({@link #restart()} waits until it serves). The in-process server
 * ({@code ZooKeeperExtension.sharedServer()}) serves every other test: it cannot be stopped on its own.
 */
final class ZooKeeperProcess implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(ZooKeeperProcess.class);

    private volatile Member member;

    @Override
    public void beforeAll(ExtensionContext context) {
        member = context.getRoot().getStore(SHARED).getOrComputeIfAbsent("member", k -> new Member(), Member.class);
    }

    /** @return the server's {@code 127.0.0.1:<port>} */
    String connectString() {
        return running().ensemble.connectString();
    }

    /** Kills the server (SIGKILL) and waits for its process to exit. */
    void kill() {
        running().ensemble.kill(0);
    }

    /** Starts the server again with its data, and waits until it serves. */
    void restart() {
        running().ensemble.restart(0);
    }

    private Member running() {
        Member m = member;
        if (m == null) {
            throw new IllegalStateException("register ZooKeeperProcess on a static field with @RegisterExtension");
        }
        return m;
    }

    /** The member process; closed when the run ends. */
    private static final class Member implements ExtensionContext.Store.CloseableResource, AutoCloseable {

        final ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start(1);

        @Override
        public void close() {
            ensemble.close();
        }
    }
}

package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnreachableClient;
import io.disco.core.SessionListener;
import io.disco.testservers.ZooKeeperExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The ZooKeeper backend of the contract kit: a {@link ZooKeeperDiscoBackend} (an owner is a {@link ZooKeeperSession}
 * on a Curator client of its own, its session timeout the owner's TTL; a frozen owner's client is pointed at a port
 * that answers nothing), plus the kit's clients whose link to the server a {@link FreezableProxy} can stall or cut.
 * Every contract class of the run shares one in-process server ({@link ZooKeeperExtension#sharedServer()}), one
 * backend and one admin client.
 */
final class ZkContractBackend implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(ZkContractBackend.class);

    private final ZooKeeperExtension zk = ZooKeeperExtension.sharedServer();
    private volatile CuratorFramework admin;
    private volatile ZooKeeperDiscoBackend backend;
    /** The run's root store: what lives until the run ends (a stallable client's proxy) is closed with it. */
    private volatile ExtensionContext.Store runStore;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        zk.beforeAll(context);
        runStore = context.getRoot().getStore(SHARED);
        admin = runStore.getOrComputeIfAbsent("admin", k -> new Admin(client(zk.connectString(), 30_000)), Admin.class)
                .client;
        backend = runStore.getOrComputeIfAbsent(
                        "backend",
                        k -> new Backend(ZooKeeperDiscoBackend.over(
                                ttl -> builder(zk.connectString(), ttl), Duration.ofSeconds(30), options())),
                        Backend.class)
                .backend;
    }

    /** @return the backend the contract classes run on: the provider's own, with its test hooks */
    TestableBackend backend() {
        return backend;
    }

    /** @return the shared admin client, for the ZooKeeper-specific parts of a test */
    CuratorFramework admin() {
        return admin;
    }

    String connectString() {
        return zk.connectString();
    }

    /**
     * A client that reaches only what {@code connectString} names: Curator's ensemble tracker is off, since it
     * would replace a single member's or a proxy's address with every member's client address from
     * {@code /zookeeper/config}, and an owner meant to be cut off would reconnect around the cut.
     */
    static CuratorFramework client(String connectString, int sessionTimeoutMs) {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .ensembleTracker(false)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(Math.min(sessionTimeoutMs, 5_000))
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        c.start();
        return c;
    }

    /** @return a backend like {@link #backend()} whose owners tell {@code listener} of their events */
    TestableBackend listening(SessionListener listener) {
        ZooKeeperOptions options = ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(10))
                .listener(listener)
                .build();
        return ZooKeeperDiscoBackend.over(ttl -> builder(zk.connectString(), ttl), Duration.ofSeconds(30), options);
    }

    static ZooKeeperOptions options() {
        return ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(10))
                .build();
    }

    private int port() {
        String cs = zk.connectString();
        return Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1));
    }

    /**
     * How every owner's client is built: on {@code connectString} only, without the ensemble tracker (which could
     * widen a proxy's address to the server's own, and point a frozen owner back at the server), the session
     * timeout the TTL.
     */
    private static CuratorFrameworkFactory.Builder builder(String connectString, Duration ttl) {
        return CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .ensembleTracker(false)
                .sessionTimeoutMs((int) ttl.toMillis())
                .connectionTimeoutMs((int) Math.min(ttl.toMillis(), 5_000))
                .retryPolicy(new RetryNTimes(3, 100));
    }

    /**
     * A client of its own whose owners reach the server through a {@link FreezableProxy}: {@code stall()} freezes
     * it (nothing is forwarded, nothing dropped: a request sent meanwhile is delivered, and applied, on
     * {@code resume()}), as a member frozen with SIGSTOP and resumed would. The session timeout is the TTL: the
     * client's ZooKeeper connection declares itself lost only after two thirds of it without an answer, and the
     * session's own deadline is the same, so a stall well below that (the kit's 2.5 s against 30 s) is no
     * disconnection for Curator (no SUSPENDED) and no loss. The proxy is closed when the run ends.
     */
    StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        FreezableProxy proxy = proxyForTheRun();
        ZooKeeperOptions options = ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(requestTimeout)
                .build();
        StallableClient.Link link = freezeLink(proxy);
        return new StallableClient(ZooKeeperDiscoBackend.over(builder(proxy.connectString(), ttl), options), link);
    }

    /**
     * A client of its own whose owners reach the server through a {@link FreezableProxy} that {@code stall()}
     * freezes for as long as the test likes (no byte passes, new connections hang), with the connect timeout and
     * request timeout the kit asks for. Its endpoints are the proxy's connect string. The proxy is closed when the
     * run ends.
     */
    UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        FreezableProxy proxy = proxyForTheRun();
        ZooKeeperOptions options = ZooKeeperOptions.builder()
                .connectTimeout(requestTimeout)
                .requestTimeout(requestTimeout)
                .ownerWait(ownerWait)
                .build();
        StallableClient.Link link = freezeLink(proxy);
        return new UnreachableClient(
                ZooKeeperDiscoBackend.over(builder(proxy.connectString(), ttl), options), proxy.connectString(), link);
    }

    /** @return a proxy to the server, closed when the run ends */
    private FreezableProxy proxyForTheRun() {
        FreezableProxy proxy;
        try {
            proxy = new FreezableProxy(port());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        runStore.put(UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) proxy::close);
        return proxy;
    }

    /** @return a link whose {@code stall()} freezes {@code proxy} and whose {@code resume()} thaws it */
    private static StallableClient.Link freezeLink(FreezableProxy proxy) {
        return new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.freeze();
            }

            @Override
            public void resume() {
                proxy.thaw();
            }
        };
    }

    /** The shared backend, closed when the run ends. */
    private static final class Backend implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final ZooKeeperDiscoBackend backend;

        Backend(ZooKeeperDiscoBackend backend) {
            this.backend = backend;
        }

        @Override
        public void close() {
            backend.close();
        }
    }

    /** The shared admin client, closed when the run ends. */
    private static final class Admin implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final CuratorFramework client;

        Admin(CuratorFramework client) {
            this.client = client;
        }

        @Override
        public void close() {
            client.close();
        }
    }
}

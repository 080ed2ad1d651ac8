package io.disco.provider.zookeeper;

import io.disco.contract.ContractBackend;
import io.disco.contract.ContractOwner;
import io.disco.contract.StallableClient;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.DefaultZookeeperFactory;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The ZooKeeper backend of the contract kit: an owner is a {@link ZooKeeperSession} on a Curator client of its
 * own (its own ZooKeeper session, its timeout the owner's TTL) that talks to the server through a
 * {@link FreezableProxy}, so that {@code freeze()} stops it as SIGSTOP would. Every contract class of the run
 * shares one in-process server ({@link ZooKeeperExtension#sharedServer()}) and one admin client.
 */
final class ZkContractBackend implements ContractBackend, BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(ZkContractBackend.class);

    private final ZooKeeperExtension zk = ZooKeeperExtension.sharedServer();
    private volatile CuratorFramework admin;
    /** The run's root store: what lives until the run ends (a stallable client's proxy) is closed with it. */
    private volatile ExtensionContext.Store runStore;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        zk.beforeAll(context);
        runStore = context.getRoot().getStore(SHARED);
        admin = context.getRoot()
                .getStore(SHARED)
                .getOrComputeIfAbsent("admin", k -> new Admin(client(zk.connectString(), 30_000)), Admin.class)
                .client;
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

    static ZooKeeperOptions options() {
        return ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Override
    public ContractOwner newOwner(Duration ttl) {
        try {
            FreezableProxy proxy = new FreezableProxy(port());
            CuratorFramework client = client(proxy.connectString(), (int) ttl.toMillis());
            try {
                return new Owner(proxy, client, ZooKeeperSession.open(client, options()));
            } catch (RuntimeException e) {
                client.close();
                proxy.close();
                throw e;
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private int port() {
        String cs = zk.connectString();
        return Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1));
    }

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return discoBackend(ttl).newLeadershipRunner(name, options);
    }

    /**
     * Every client it builds records its ZooKeeper handles, so that {@link #endOwnerOf} can end a session by its
     * id, as the server ends an expired one.
     */
    @Override
    public ZooKeeperDiscoBackend discoBackend(Duration ttl) {
        return ZooKeeperDiscoBackend.over(builder(zk.connectString(), ttl).ensembleTracker(true), options());
    }

    /**
     * A client of its own whose owners reach the server through a {@link FreezableProxy}: {@code stall()} freezes
     * it (nothing is forwarded, nothing dropped: a request sent meanwhile is delivered, and applied, on
     * {@code resume()}), as a member frozen with SIGSTOP and resumed would. The session timeout is the TTL: the
     * client's ZooKeeper connection declares itself lost only after two thirds of it without an answer, and the
     * session's own deadline is the same, so a stall well below that (the kit's 2.5 s against 30 s) is no
     * disconnection for Curator (no SUSPENDED) and no loss. The proxy is closed when the run ends.
     */
    @Override
    public StallableClient stallableDiscoBackend(Duration ttl, Duration requestTimeout) {
        FreezableProxy proxy;
        try {
            proxy = new FreezableProxy(port());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        runStore.put(java.util.UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) proxy::close);
        ZooKeeperOptions options = ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(requestTimeout)
                .build();
        StallableClient.Link link = new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.freeze();
            }

            @Override
            public void resume() {
                proxy.thaw();
            }
        };
        return new StallableClient(ZooKeeperDiscoBackend.over(builder(proxy.connectString(), ttl), options), link);
    }

    /**
     * A client of its own whose owners reach the server through a {@link FreezableProxy} that {@code stall()}
     * freezes for as long as the test likes (no byte passes, new connections hang), with the connect timeout and
     * request timeout the kit asks for. Its endpoints are the proxy's connect string. The proxy is closed when the
     * run ends.
     */
    @Override
    public io.disco.contract.UnreachableClient unreachableDiscoBackend(
            Duration ttl, Duration requestTimeout, Duration ownerWait) {
        FreezableProxy proxy;
        try {
            proxy = new FreezableProxy(port());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        runStore.put(java.util.UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) proxy::close);
        ZooKeeperOptions options = ZooKeeperOptions.builder()
                .connectTimeout(requestTimeout)
                .requestTimeout(requestTimeout)
                .ownerWait(ownerWait)
                .build();
        StallableClient.Link link = new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.freeze();
            }

            @Override
            public void resume() {
                proxy.thaw();
            }
        };
        return new io.disco.contract.UnreachableClient(
                ZooKeeperDiscoBackend.over(builder(proxy.connectString(), ttl), options), proxy.connectString(), link);
    }

    /**
     * How {@link #discoBackend} and {@link #stallableDiscoBackend} build each owner's client, recording its
     * handles: on {@code connectString} only (no ensemble tracker, which could widen a proxy's address to the
     * server's own; {@link #discoBackend} turns it back on, as it always had it).
     */
    private static CuratorFrameworkFactory.Builder builder(String connectString, Duration ttl) {
        DefaultZookeeperFactory factory = new DefaultZookeeperFactory();
        return CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .ensembleTracker(false)
                .sessionTimeoutMs((int) ttl.toMillis())
                .connectionTimeoutMs((int) Math.min(ttl.toMillis(), 5_000))
                .zookeeperFactory((cs, timeout, watcher, canBeReadOnly) -> {
                    ZooKeeper handle = factory.newZooKeeper(cs, timeout, watcher, canBeReadOnly);
                    HANDLES.removeIf(h -> !h.getState().isAlive());
                    HANDLES.add(handle);
                    return handle;
                })
                .retryPolicy(new RetryNTimes(3, 100));
    }

    /** The ZooKeeper handles of the clients {@link #discoBackend} built, open or closed. */
    private static final java.util.Queue<ZooKeeper> HANDLES = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * The ephemeral nodes under {@code name}, at any depth, as full paths: the owners' queue nodes. The
     * directories (Curator's container parents, which the server deletes only on its container sweep) are
     * nobody's and are not listed.
     */
    @Override
    public List<String> keys(String name) throws Exception {
        admin.sync().forPath(name);
        List<String> keys = new ArrayList<>();
        collectEphemerals(name, keys);
        Collections.sort(keys);
        return keys;
    }

    private void collectEphemerals(String path, List<String> into) throws Exception {
        List<String> children;
        try {
            children = admin.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        for (String child : children) {
            String p = path + "/" + child;
            org.apache.zookeeper.data.Stat s = admin.checkExists().forPath(p);
            if (s == null) {
                continue;
            }
            if (s.getEphemeralOwner() != 0) {
                into.add(p);
            } else if (s.getNumChildren() > 0) {
                collectEphemerals(p, into);
            }
        }
    }

    @Override
    public void deleteKey(String key) throws Exception {
        admin.delete().forPath(key);
    }

    /** The session id, in hex, of the ephemeral node {@code key}; null when it is absent or persistent. */
    @Override
    public String ownerOf(String key) throws Exception {
        org.apache.zookeeper.data.Stat s = admin.checkExists().forPath(key);
        return s == null || s.getEphemeralOwner() == 0 ? null : Long.toHexString(s.getEphemeralOwner());
    }

    /**
     * Ends the session that owns the ephemeral node {@code key} on the server, as an expiry would, without telling
     * its client: a second handle on the same session id and password closes it (the server deletes its ephemeral
     * nodes at once); the client learns it on its next contact. Ending a session needs its password, so only the
     * sessions of clients this backend built ({@link #discoBackend}) can be ended.
     */
    @Override
    public void endOwnerOf(String key) throws Exception {
        org.apache.zookeeper.data.Stat s = admin.checkExists().forPath(key);
        if (s == null || s.getEphemeralOwner() == 0) {
            throw new IllegalArgumentException(key + " is absent or belongs to no session");
        }
        ZooKeeper handle = HANDLES.stream()
                .filter(h -> h.getSessionId() == s.getEphemeralOwner())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("session 0x" + Long.toHexString(s.getEphemeralOwner())
                        + " of " + key + " is not one of this backend's clients"));
        endSession(handle.getSessionId(), handle.getSessionPasswd(), handle.getSessionTimeout(), zk.connectString());
    }

    /** Closes the session {@code id} on the server through a second handle with its password. */
    private static void endSession(long id, byte[] password, int timeoutMs, String serverConnectString)
            throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(
                serverConnectString,
                timeoutMs,
                e -> {
                    if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                id,
                password);
        try {
            if (!connected.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not attach to session 0x" + Long.toHexString(id));
            }
        } finally {
            twin.close();
        }
    }

    /** Curator's and ZooKeeper's threads, and the session's and its workers'. */
    @Override
    public boolean isBackendThread(Thread thread) {
        String name = thread.getName();
        return name.startsWith("disco-zk-")
                || name.contains("-EventThread")
                || name.contains("-SendThread")
                || name.startsWith("Curator-");
    }

    /**
     * Ends a session on the server, as its expiry would: a second handle on the same session id and password
     * closes it (the server deletes its ephemeral nodes at once), then the owner's own handle is told that its
     * session expired, as it would be on its next contact with the server.
     */
    static void expire(CuratorFramework client, String serverConnectString) throws Exception {
        ZooKeeper own = client.getZookeeperClient().getZooKeeper();
        endSession(own.getSessionId(), own.getSessionPasswd(), own.getSessionTimeout(), serverConnectString);
        own.getTestable().injectSessionExpiration();
    }

    /** One owner: its proxy, its client, its session. */
    private final class Owner implements ContractOwner {

        private final FreezableProxy proxy;
        private final CuratorFramework client;
        private final ZooKeeperSession session;

        Owner(FreezableProxy proxy, CuratorFramework client, ZooKeeperSession session) {
            this.proxy = proxy;
            this.client = client;
            this.session = session;
        }

        @Override
        public LockService newLock(String name) {
            return session.newLock(name);
        }

        @Override
        public RWLockService newRWLock(String name) {
            return session.newRWLock(name);
        }

        @Override
        public SemaphoreService newSemaphore(String name, int limit) {
            return session.newSemaphore(name, limit);
        }

        @Override
        public ElectionService newElection(String name) {
            return session.newElection(name);
        }

        @Override
        public void revoke() throws Exception {
            expire(client, zk.connectString());
        }

        @Override
        public void freeze() {
            proxy.freeze();
        }

        @Override
        public CompletionStage<Void> done() {
            return session.done();
        }

        @Override
        public void close() {
            try {
                session.close();
            } finally {
                client.close();
                proxy.close();
            }
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

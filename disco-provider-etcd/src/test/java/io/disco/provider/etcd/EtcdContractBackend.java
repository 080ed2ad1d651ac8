package io.disco.provider.etcd;

import io.disco.client.DiscoBackend;
import io.disco.contract.ContractBackend;
import io.disco.contract.ContractOwner;
import io.disco.contract.StallableClient;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.TcpProxy;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The etcd backend of the contract kit: an owner is an {@link EtcdSession}, a runner comes from
 * {@link EtcdProvider#newLeadershipRunner}. Every contract class of the run shares one etcd member and one
 * client (JUnit's root store), so the kit adds no member start-up per class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdContractBackend ETCD = new EtcdContractBackend();
 * }</pre>
 */
final class EtcdContractBackend implements ContractBackend, BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(EtcdContractBackend.class);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final EtcdExtension etcd = EtcdExtension.sharedMember();
    /** Whether a stall freezes the member itself (SIGSTOP) rather than one client's link to it. */
    private final boolean stallFreezesMember;

    private volatile Client client;
    /** The run's root store: what a test makes for the whole run (a stallable client's proxy) is closed with it. */
    private volatile ExtensionContext.Store runStore;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        etcd.beforeAll(context);
        runStore = context.getRoot().getStore(SHARED);
        client = context.getRoot()
                .getStore(SHARED)
                .getOrComputeIfAbsent(
                        "client",
                        k -> {
                            Client c = Etcd.client(etcd.cluster());
                            try {
                                Etcd.revision(c); // connected before the first test's timed parts
                            } catch (Exception e) {
                                c.close();
                                throw new IllegalStateException(
                                        "etcd does not answer at "
                                                + etcd.cluster().endpoints(),
                                        e);
                            }
                            return c;
                        },
                        Client.class);
    }

    /** @return the shared client, for the etcd-specific parts of a test */
    Client client() {
        return client;
    }

    private static EtcdOptions options(Duration ttl) {
        return EtcdOptions.builder().ttl(ttl).requestTimeout(REQUEST_TIMEOUT).build();
    }

    @Override
    public ContractOwner newOwner(Duration ttl) {
        return new Owner(EtcdSession.open(client, options(ttl)));
    }

    @Override
    public DiscoBackend discoBackend(Duration ttl) {
        return new EtcdDiscoBackend(client, options(ttl));
    }

    /** A backend whose stalls cut one client's link to the member (a proxy). */
    EtcdContractBackend() {
        this(false);
    }

    /**
     * @param stallFreezesMember whether a stall freezes the shared member itself with SIGSTOP, for every client
     *                           of the test (the fault run of issue 44), rather than one client's link
     */
    EtcdContractBackend(boolean stallFreezesMember) {
        this.stallFreezesMember = stallFreezesMember;
    }

    /**
     * A client of its own that reaches the member through a {@link TcpProxy}: {@code stall()} stops forwarding
     * without dropping a byte (a request sent meanwhile is delivered, and applied, on {@code resume()}), as a
     * member frozen with SIGSTOP would; the proxy and the client are closed when the run ends. With
     * {@link #EtcdContractBackend(boolean) stallFreezesMember}, a stall freezes the member itself.
     */
    @Override
    public StallableClient stallableDiscoBackend(Duration ttl, Duration requestTimeout) {
        EtcdOptions options =
                EtcdOptions.builder().ttl(ttl).requestTimeout(requestTimeout).build();
        if (stallFreezesMember) {
            StallableClient.Link frozen = new StallableClient.Link() {
                @Override
                public void stall() {
                    etcd.cluster().pause(0);
                }

                @Override
                public void resume() {
                    etcd.cluster().resume(0);
                }
            };
            return new StallableClient(new EtcdDiscoBackend(client, options), frozen);
        }
        URI member = URI.create(etcd.cluster().endpoints().get(0));
        TcpProxy proxy;
        try {
            proxy = new TcpProxy(new InetSocketAddress(member.getHost(), member.getPort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Client own =
                Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build();
        runStore.put(UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) () -> {
            own.close();
            proxy.close();
        });
        StallableClient.Link link = new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.blackhole(true);
            }

            @Override
            public void resume() {
                proxy.blackhole(false);
            }
        };
        return new StallableClient(new EtcdDiscoBackend(own, options), link);
    }

    /**
     * A client of its own that reaches the member through a {@link TcpProxy}, whose {@code stall()} stops
     * forwarding (connections hang, nothing is answered) for as long as the test likes; the proxy and the client
     * are closed when the run ends. Its endpoints are the proxy's.
     */
    @Override
    public io.disco.contract.UnreachableClient unreachableDiscoBackend(
            Duration ttl, Duration requestTimeout, Duration ownerWait) {
        URI member = URI.create(etcd.cluster().endpoints().get(0));
        TcpProxy proxy;
        try {
            proxy = new TcpProxy(new InetSocketAddress(member.getHost(), member.getPort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String endpoint = "127.0.0.1:" + proxy.port();
        Client own = Client.builder()
                .endpoints("http://" + endpoint)
                .interceptor(EtcdDeadlines.unary(requestTimeout))
                .build();
        runStore.put(UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) () -> {
            own.close();
            proxy.close();
        });
        StallableClient.Link link = new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.blackhole(true);
            }

            @Override
            public void resume() {
                proxy.blackhole(false);
            }
        };
        EtcdOptions options = EtcdOptions.builder()
                .ttl(ttl)
                .requestTimeout(requestTimeout)
                .ownerWait(ownerWait)
                .build();
        return new io.disco.contract.UnreachableClient(new EtcdDiscoBackend(own, options), endpoint, link);
    }

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return EtcdProvider.newLeadershipRunner(client, name, options, options(ttl));
    }

    /** The keys under {@code name/}, and a semaphore's slot claims, which lie outside it. */
    @Override
    public List<String> keys(String name) throws Exception {
        List<String> keys = new ArrayList<>(Etcd.keysUnder(client, name));
        keys.addAll(Etcd.keysUnder(client, EtcdKeys.SLOT_NAMESPACE + name));
        Collections.sort(keys);
        return keys;
    }

    @Override
    public void deleteKey(String key) throws Exception {
        client.getKVClient().delete(Etcd.bytes(key)).get(5, TimeUnit.SECONDS);
    }

    /** The key's lease, in hex as in the keys of etcd's Go recipes. */
    @Override
    public String ownerOf(String key) throws Exception {
        List<io.etcd.jetcd.KeyValue> kvs = client.getKVClient()
                .get(Etcd.bytes(key))
                .get(5, TimeUnit.SECONDS)
                .getKvs();
        return kvs.isEmpty() || kvs.get(0).getLease() == 0
                ? null
                : Long.toHexString(kvs.get(0).getLease());
    }

    /** Revokes the key's lease, as {@code etcdctl lease revoke} does. */
    @Override
    public void endOwnerOf(String key) throws Exception {
        String lease = ownerOf(key);
        if (lease == null) {
            throw new IllegalStateException("key " + key + " is absent or has no lease");
        }
        client.getLeaseClient().revoke(Long.parseUnsignedLong(lease, 16)).get(5, TimeUnit.SECONDS);
    }

    /** Advances the revision past the waiters' and compacts up to it. */
    @Override
    public void compactHistory() throws Exception {
        client.getKVClient()
                .put(Etcd.bytes("/contract/compaction-noise"), Etcd.bytes("x"))
                .get(5, TimeUnit.SECONDS);
        client.getKVClient().compact(Etcd.revision(client)).get(5, TimeUnit.SECONDS);
    }

    /** A session's own threads: its lease timer and its worker. */
    @Override
    public boolean isBackendThread(Thread thread) {
        String name = thread.getName();
        return name.startsWith("disco-session") || name.startsWith("disco-lease");
    }

    /** One session: the kit's owner. */
    private final class Owner implements ContractOwner {

        private final EtcdSession session;

        Owner(EtcdSession session) {
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
            client.getLeaseClient().revoke(session.leaseId()).get(5, TimeUnit.SECONDS);
        }

        @Override
        public void freeze() {
            session.orphan();
        }

        @Override
        public CompletionStage<Void> done() {
            return session.done();
        }

        @Override
        public void close() {
            session.close();
        }
    }
}

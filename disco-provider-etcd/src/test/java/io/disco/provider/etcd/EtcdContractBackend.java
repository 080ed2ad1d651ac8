package io.disco.provider.etcd;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.disco.testing.EtcdExtension;
import io.disco.testing.contract.ContractBackend;
import io.disco.testing.contract.ContractOwner;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(EtcdContractBackend.class);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final EtcdExtension etcd = EtcdExtension.sharedMember();
    private volatile Client client;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        etcd.beforeAll(context);
        client = context.getRoot().getStore(SHARED).getOrComputeIfAbsent("client", k -> {
            Client c = Etcd.client(etcd.cluster());
            try {
                Etcd.revision(c); // connected before the first test's timed parts
            } catch (Exception e) {
                c.close();
                throw new IllegalStateException("etcd does not answer at " + etcd.cluster().endpoints(), e);
            }
            return c;
        }, Client.class);
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

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return EtcdProvider.newLeadershipRunner(client, name, options, options(ttl));
    }

    /** The keys under {@code name/}, and a semaphore's slot claims, which lie outside it. */
    @Override
    public List<String> keys(String name) throws Exception {
        List<String> keys = new ArrayList<>(Etcd.keysUnder(client, name));
        keys.addAll(Etcd.keysUnder(client, EtcdSemaphoreService.SLOT_NAMESPACE + name));
        Collections.sort(keys);
        return keys;
    }

    @Override
    public void deleteKey(String key) throws Exception {
        client.getKVClient().delete(Etcd.bytes(key)).get(5, TimeUnit.SECONDS);
    }

    /** Revokes the lease the key is attached to (read with a linearizable Get), as {@code etcdctl lease revoke}. */
    @Override
    public void revokeOwnerOf(String key) throws Exception {
        var kvs = client.getKVClient().get(Etcd.bytes(key)).get(5, TimeUnit.SECONDS).getKvs();
        if (kvs.isEmpty() || kvs.get(0).getLease() == 0) {
            throw new IllegalStateException("no leased key " + key);
        }
        client.getLeaseClient().revoke(kvs.get(0).getLease()).get(5, TimeUnit.SECONDS);
    }

    /** Advances the revision past the waiters' and compacts up to it. */
    @Override
    public void compactHistory() throws Exception {
        client.getKVClient().put(Etcd.bytes("/contract/compaction-noise"), Etcd.bytes("x")).get(5, TimeUnit.SECONDS);
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

package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The client's backend on etcd: an owner is an {@link EtcdSession} (one lease), its
 * services the session's. It is described by the jetcd client's endpoints, waits for an owner as long as the options'
 * {@linkplain EtcdOptions#ownerWait() owner wait}, and tells the client when the application closed the jetcd client
 * first. Its test hooks ({@link TestableBackend}) act through the same jetcd client, each request bounded by the
 * options' request timeout: a frozen owner is an orphaned session ({@link EtcdSession#orphan()}), ending an owner
 * revokes its lease. It never closes the jetcd client.
 */
final class EtcdDiscoBackend implements TestableBackend {

    /** The key {@link #compactHistory()} writes to move the revision past every waiter's. */
    private static final String COMPACTION_NOISE = "disco-compaction-noise";

    private final Client client;
    private final EtcdOptions options;
    private final EtcdEndpoints endpoints;

    EtcdDiscoBackend(Client client, EtcdOptions options) {
        this.client = client;
        this.options = options;
        this.endpoints = EtcdEndpoints.of(client);
    }

    @Override
    public Owner open() {
        return EtcdSession.open(client, options);
    }

    @Override
    public String describe() {
        return endpoints.describe();
    }

    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElse(options.ttl());
    }

    @Override
    public Optional<String> clientClosed() {
        return endpoints.closed() ? Optional.of(EtcdEndpoints.CLOSED_FIRST) : Optional.empty();
    }

    /** The same jetcd client, with the options' TTL replaced (a whole number of seconds, as etcd's leases have). */
    @Override
    public TestableBackend withTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        return ttl.equals(options.ttl()) ? this : new EtcdDiscoBackend(client, options.withTtl(ttl));
    }

    /** {@link EtcdProvider#newLeadershipRunner(Client, String, LeadershipRunner.Options, EtcdOptions)}, with the TTL. */
    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return EtcdProvider.newLeadershipRunner(client, name, options, this.options.withTtl(ttl));
    }

    /** Orphans the owner's session: its keepalive stops, its lease expires after its TTL. */
    @Override
    public void freeze(Owner owner) {
        session(owner).orphan();
    }

    /** Revokes the owner's lease, as {@code etcdctl lease revoke} does. */
    @Override
    public void endOwner(Owner owner) {
        revoke(session(owner).leaseId());
    }

    /** Revokes the key's lease, as {@code etcdctl lease revoke} does. */
    @Override
    public void endOwnerOf(String key) {
        String lease =
                ownerOf(key).orElseThrow(() -> new IllegalStateException("key " + key + " is absent or has no lease"));
        revoke(Long.parseUnsignedLong(lease, 16));
    }

    /** The keys under {@code name/}, and a semaphore's slot claims, which lie outside it. */
    @Override
    public List<String> keys(String name) {
        List<String> keys = new ArrayList<>(keysUnder(name));
        keys.addAll(keysUnder(EtcdKeys.SLOT_NAMESPACE + name));
        Collections.sort(keys);
        return keys;
    }

    @Override
    public void deleteKey(String key) {
        await(client.getKVClient().delete(bytes(key)), "delete " + key);
    }

    /** The key's lease, in hex as in the keys of etcd's Go recipes. */
    @Override
    public Optional<String> ownerOf(String key) {
        List<KeyValue> kvs =
                await(client.getKVClient().get(bytes(key)), "read " + key).getKvs();
        return kvs.isEmpty() || kvs.get(0).getLease() == 0
                ? Optional.empty()
                : Optional.of(Long.toHexString(kvs.get(0).getLease()));
    }

    /** Advances the revision past the waiters' (a put of {@value #COMPACTION_NOISE}) and compacts up to it. */
    @Override
    public void compactHistory() {
        long revision = await(
                        client.getKVClient().put(bytes(COMPACTION_NOISE), bytes("x")), "write " + COMPACTION_NOISE)
                .getHeader()
                .getRevision();
        await(client.getKVClient().compact(revision), "compact up to revision " + revision);
    }

    /** A session's own threads: its lease timer ({@code disco-lease-*}) and its worker ({@code disco-session-*}). */
    @Override
    public boolean isBackendThread(Thread thread) {
        String name = thread.getName();
        return name.startsWith("disco-session") || name.startsWith("disco-lease");
    }

    private static EtcdSession session(Owner owner) {
        Objects.requireNonNull(owner, "owner");
        if (!(owner instanceof EtcdSession session)) {
            throw new IllegalArgumentException(owner + " is not an owner of an etcd backend");
        }
        return session;
    }

    private void revoke(long lease) {
        await(client.getLeaseClient().revoke(lease), "revoke lease " + Long.toHexString(lease));
    }

    private List<String> keysUnder(String prefix) {
        return await(
                        client.getKVClient()
                                .get(
                                        bytes(prefix + "/"),
                                        GetOption.builder().isPrefix(true).build()),
                        "list the keys under " + prefix + "/")
                .getKvs()
                .stream()
                .filter(kv -> kv.getLease() != 0) // an owner's keys: not a double barrier's open mark
                .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                .toList();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Waits at most the request timeout for {@code request}, failing with a {@link DiscoException} that says what. */
    private <T> T await(CompletableFuture<T> request, String what) {
        try {
            return request.get(options.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            request.cancel(true);
            throw new DiscoException(
                    describe() + " did not answer in "
                            + options.requestTimeout().toMillis() + " ms: " + what,
                    e);
        } catch (ExecutionException e) {
            throw new DiscoException(describe() + " failed to " + what + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while waiting for etcd to " + what, e);
        }
    }
}

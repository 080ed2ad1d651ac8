package io.disco.provider.etcd;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.IssuedBound;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The guard's {@link IssuedBound} for tokens issued by this library on etcd: etcd's current cluster
 * revision, so that a guard built with it ({@code Guard.builder().issuedBound(EtcdIssuedBound.of(client))})
 * refuses a token that no etcd grant issued instead of letting it raise the mark.
 *
 * <p>Each {@link #current()} is one <b>linearizable</b> Get (count only: no key or value is sent
 * back) of one key; the revision is the one in the response header. etcd serves a linearizable read
 * only after confirming with a quorum that its member is up to date, so the revision is at least
 * that of every write (every grant) that completed before the read began. The Maintenance
 * {@code Status} call also reports a revision in its header, and needs no permission at all, but it
 * is the answering member's local state: a member that lags (partitioned, restarting) would report a
 * revision below tokens already issued, and their owners would be refused as "not issued". It is
 * not used.
 *
 * <p><b>Load.</b> The guard reads once per new owner (coalesced across its requests), never while
 * idle, and after a read that refused a token or failed, not again before its read interval
 * ({@link Guard.Builder#boundReadInterval}, default {@value Guard#DEFAULT_BOUND_READ_INTERVAL_MILLIS} ms):
 * a flood of requests with forged tokens costs etcd at most one quorum read per interval (measured:
 * 20 reads/s under 64 threads of forged tokens, against 280–600/s without the interval).
 *
 * <p><b>Permissions.</b> With etcd authentication on, the client's user needs {@code read}
 * permission on the probed key ({@code etcdctl role grant-permission <role> read <key>}); etcd
 * answers a Get of any other key with {@code PERMISSION_DENIED}, and the guard then refuses every
 * new owner's first request with 503. Checked on etcd 3.4.23: a user with read on the key gets its
 * revision; one without gets {@code permission denied}. The default key is {@value #DEFAULT_KEY};
 * {@link #of(Client, String)} probes a key the user can already read instead, for example the lock's
 * own name. The key need not exist. TLS and authentication are the client's: build it as for the
 * lock services (the same client may be shared).
 *
 * <p><b>Deadline.</b> jetcd sends unary calls without a deadline; build the client with
 * {@link EtcdDeadlines#unary} so that a read the guard gave up on ({@link Guard.Builder#boundTimeout})
 * is also cancelled on the wire. Thread-safe; the caller owns the client, which this never closes.
 */
public final class EtcdIssuedBound implements IssuedBound {

    /** The key probed by {@link #of(Client)}; it need not exist. */
    public static final String DEFAULT_KEY = "disco-revision-probe";

    private static final GetOption COUNT_ONLY =
            GetOption.builder().withCountOnly(true).build();

    private final KV kv;
    private final ByteSequence key;
    private final String keyName;

    private EtcdIssuedBound(Client client, String key) {
        this.kv = Objects.requireNonNull(client, "client").getKVClient();
        if (Objects.requireNonNull(key, "key").isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        this.key = ByteSequence.from(key, StandardCharsets.UTF_8);
        this.keyName = key;
    }

    /**
     * The bound read with a Get of {@value #DEFAULT_KEY}.
     *
     * @param client the caller's jetcd client, connected to the cluster that issues the tokens
     * @return the bound
     */
    public static EtcdIssuedBound of(Client client) {
        return new EtcdIssuedBound(client, DEFAULT_KEY);
    }

    /**
     * The bound read with a Get of {@code readableKey}: with authentication on, a key the client's user
     * may read.
     *
     * @param client the caller's jetcd client, connected to the cluster that issues the tokens
     * @param readableKey the key to probe; it need not exist
     * @return the bound
     * @throws NullPointerException if {@code readableKey} is null
     * @throws IllegalArgumentException if {@code readableKey} is empty
     */
    public static EtcdIssuedBound of(Client client, String readableKey) {
        return new EtcdIssuedBound(client, readableKey);
    }

    /**
     * One linearizable, count-only Get of the key.
     *
     * @return a stage completed with the revision in its response header, or exceptionally with
     *     jetcd's failure (etcd unreachable, no leader, permission denied)
     */
    @Override
    public CompletionStage<FencingToken> current() {
        return kv.get(key, COUNT_ONLY)
                .thenApply(r -> FencingToken.of(r.getHeader().getRevision()));
    }

    @Override
    public String toString() {
        return "EtcdIssuedBound[" + keyName + "]";
    }
}

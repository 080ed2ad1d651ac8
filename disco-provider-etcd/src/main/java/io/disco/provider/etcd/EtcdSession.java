package io.disco.provider.etcd;

import io.disco.client.Barriers;
import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.DiscoSession;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One etcd lease, kept alive in the background, shared by any number of lock, read/write lock and
 * election services.
 *
 * <h2>Lease validity</h2>
 * The session renews its lease every third of the TTL the server granted. It tracks the lease's
 * validity on the local monotonic clock, counted from the moment the last answered renewal was
 * <em>sent</em> plus the granted TTL, so it never believes in a lease that the server may already
 * have expired. A renewal that fails for a transient reason (a broken stream, an unreachable member)
 * is retried and is not a loss. The lease is lost, and {@link #done()} completes with
 * {@link #err()} set, when the server answers that the lease no longer exists (revoked or expired),
 * or when the local validity passes without an answered renewal. Every service on the session is
 * lost with it. A session is handed out with at least half its TTL of validity left: when the grant
 * was answered later than that, {@link #open} renews the lease first.
 *
 * <h2>Threads</h2>
 * Renewal and the expiry check run on a timer thread of their own ({@code disco-lease-<lease>}) that
 * nothing else uses; the services' state machines run on a second thread ({@code disco-session-<lease>}).
 * No user code runs on either: every future handed to the user ({@code lockAsync()}, {@code done()},
 * ...) completes on the {@linkplain EtcdOptions.Builder#callbackExecutor callback executor}, so a
 * callback that blocks, or calls back into this library, cannot delay renewal or {@code done()}.
 * A blocking call of this library made on one of these threads fails at once with an
 * {@link IllegalStateException} instead of deadlocking. No object handed to users is used as an
 * internal lock: a user's {@code synchronized} block on a session or a service stalls nothing inside.
 *
 * <h2>Who closes what</h2>
 * The caller owns the jetcd {@link Client}: nothing in this library closes it. {@link #close()}
 * revokes the lease, which releases every lock, read/write lock and leadership held through this
 * session at once, and finishes all its services. {@link #orphan()} stops renewing without revoking:
 * the lease then expires after its TTL, as if the process had frozen.
 *
 * <p>Thread-safe.
 */
public final class EtcdSession implements DiscoSession, DiscoBackend.Owner {

    /** A session's state, for health checks. */
    public enum State {
        /** The lease is renewed; its services may hold grants. */
        ALIVE,
        /** {@link #orphan()} stopped the renewals; the lease runs out. */
        ORPHANED,
        /** The lease is lost: every service is finished. */
        LOST,
        /** Closed by its owner. */
        CLOSED
    }

    /** Everything but the public face: what the services depend on. */
    private final SessionCore core;

    private final EtcdBarriers barriers;

    private EtcdSession(Client client, GrantedLease granted, EtcdOptions options) {
        this.core = new SessionCore(this, client, granted, options);
        this.barriers = new EtcdBarriers(core);
    }

    /**
     * Opens a session with the {@linkplain EtcdOptions#defaults() default options}.
     *
     * @param client the caller's jetcd client; never closed by this library
     * @return the open session
     * @throws DiscoException if etcd refuses the lease or does not answer within the request timeout
     */
    public static EtcdSession open(Client client) {
        return open(client, EtcdOptions.defaults());
    }

    /**
     * Grants a lease with the options' TTL and starts keeping it alive. The session is handed out only
     * with at least half its TTL of validity left, counted from when the grant was sent: a grant answered
     * later than that (a cold JVM's first request, a slow link) is renewed first, within the request
     * timeout. The first session of a jetcd client also reads, in the background, the etcd members'
     * versions, and logs one warning if one has a known lease bug (see
     * <a href="https://github.com/etcd-io/etcd/issues/15247">etcd issue 15247</a>: 3.4 before 3.4.31,
     * 3.5 before 3.5.13).
     *
     * @param client the caller's jetcd client; never closed by this library
     * @param options the TTL and request timeout
     * @return the open session
     * @throws NullPointerException if {@code client} or {@code options} is null
     * @throws DiscoException if etcd refuses the lease or does not answer within the request timeout, or
     *     the lease cannot be renewed to half its TTL of validity within the request timeout (the lease is
     *     then revoked)
     */
    public static EtcdSession open(Client client, EtcdOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        EtcdSession s = new EtcdSession(client, GrantedLease.grant(client, options), options);
        s.core.start();
        // Once per client, in the background: warn of an etcd version with a known lease bug.
        EtcdServerVersion.checkOnce(client, options.requestTimeout());
        return s;
    }

    /**
     * The barriers through this session: a barrier's key has no lease; a double barrier participant's key is on this
     * session's lease. For the client ({@code Disco.barrier}, {@code Disco.doubleBarrier}), which blocks on them.
     *
     * @return the barrier steps
     */
    @Override
    public Barriers barriers() {
        return barriers;
    }

    /**
     * Creates a lock service on this session. Its key is {@code <name>/<lease id in hex>}, as in
     * etcd's Go {@code concurrency.Mutex}, so it contends correctly with {@code etcdctl lock}, Go
     * programs and jetcd's lock client on the same name.
     *
     * @param name the lock's name, for example {@code /locks/my-resource}; a name by the rule of {@link io.disco.client.Names}
     * @return a new lock service; closing it does not close this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public LockService newLock(String name) {
        return EtcdLockService.create(core, name, false);
    }

    /**
     * Creates a read/write lock service on this session, with the algorithm of etcd's Go
     * {@code recipes.RWMutex}: a reader's key is {@code <name>/read/<lease id in hex>}, a writer's
     * {@code <name>/write/<lease id in hex>}; a reader waits for the last writer that asked before
     * it, a writer for the last owner of either kind. A non-leased marker
     * {@code disco-rwlock-phase:<name>}, outside {@code <name>/}, gives the readers of one read
     * phase their shared fencing token.
     *
     * @param name the read/write lock's name, for example {@code /rwlocks/my-resource}; a name by the rule of {@link io.disco.client.Names}
     * @return a new read/write lock service; closing it does not close this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public RWLockService newRWLock(String name) {
        return EtcdRWLockService.create(core, name, false);
    }

    /**
     * Creates an election service on this session. Its candidate key is {@code <name>/<lease id in hex>}
     * holding the candidate's value, as in etcd's Go {@code concurrency.Election}, so it takes part in
     * the same election as {@code etcdctl elect}, Go programs and jetcd's election client on the same
     * name. The fencing token of a term is the CreateRevision of the winning key.
     *
     * @param name the election's name, for example {@code /elections/my-service}; a name by the rule of {@link io.disco.client.Names}
     * @return a new election service; closing it does not close this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public ElectionService newElection(String name) {
        return EtcdElectionService.create(core, name, false);
    }

    /**
     * Creates a counting semaphore service on this session, compatible with the Go disco semaphore:
     * its holder key is {@code <name>/<lease id in hex>}, and a holder is admitted once fewer than
     * {@code limit} keys created before its own remain under {@code <name>/}. Each permit also
     * claims a slot (a leased key {@code disco-semaphore-slot:<name>/<slot>}, outside the range Go
     * counts) whose token is strictly increasing per slot; the limit is recorded in
     * {@code disco-semaphore-limit:<name>}.
     *
     * @param name the semaphore's name, for example {@code /semaphores/exports}; a name by the rule of {@link io.disco.client.Names}
     * @param limit how many may hold a permit at once, at least 1; the same for every service on the name
     * <p>Unlike the other services, several semaphore services of one session may share a name: each is
     * one more holder of one permit, under its own key ({@code <name>/<lease id in hex>} for the first,
     * {@code <name>/<lease id in hex>-<n>} for further ones, all counted by Go's admission), so one lease
     * can hold several permits. {@code io.disco.client.Disco#semaphore} is built on this.
     *
     * @return a new semaphore service; closing it does not close this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names}), {@code limit < 1}, or the name has another limit
     * @throws IllegalStateException if this session has a service of another kind on {@code name} or on a
     *     name nested with it, or is closed or lost
     * @throws io.disco.fencing.DiscoException if etcd does not answer the limit check in time
     */
    public SemaphoreService newSemaphore(String name, int limit) {
        return EtcdSemaphoreService.create(core, name, limit, false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On etcd: one read-only Txn of the name's keys ordered by CreateRevision. Tokens: a lock
     * holder's is its key's CreateRevision when it did not wait, else the token this library records
     * in the value after a waited acquisition (empty until that write lands, and for another client's
     * holder that waited); a writer's is recorded the same way; readers of a read/write lock share the
     * phase marker's CreateRevision; a semaphore holder's is its slot token; a leader's is its key's
     * CreateRevision. The value of a lock, read/write lock or semaphore key written by this library is
     * the {@linkplain io.disco.core.ClaimMetadata claim's metadata}; an election's value is the
     * candidate's own and is listed as it is, with empty metadata.
     */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return new ClaimantListing(core.client(), core.requestTimeout()).list(primitive, name);
    }

    /** @return the id of this session's lease */
    public long leaseId() {
        return core.leaseId();
    }

    /** @return the lease id in hex, as {@code etcdctl lease list} shows it: the owner's id for the client */
    @Override
    public String id() {
        return core.leaseHex();
    }

    /** @return {@code lease <id in hex> (TTL <s> s)}, as the client's messages name an owner */
    @Override
    public String describe() {
        return "lease " + core.leaseHex() + " (TTL " + core.ttlSeconds() + " s)";
    }

    /** @return the TTL etcd granted this session's lease */
    public Duration ttl() {
        return Duration.ofSeconds(core.ttlSeconds());
    }

    /**
     * How long the lease is valid from now, on the local monotonic clock: what a health check asks.
     *
     * @return the remaining validity; zero once lost or closed
     */
    public Duration remainingValidity() {
        return core.remainingValidity();
    }

    /** @return the session's state */
    public State state() {
        switch (core.state()) {
            case ALIVE:
                return State.ALIVE;
            case ORPHANED:
                return State.ORPHANED;
            case LOST:
                return State.LOST;
            default:
                return State.CLOSED;
        }
    }

    /**
     * Completes, once, when the lease is lost or the session is closed. Always completes normally;
     * {@link #err()} tells whether it was a loss.
     *
     * @return a stage completing when the session is finished
     */
    public CompletionStage<Void> done() {
        return core.done().minimalCompletionStage();
    }

    /** @return the reason the lease was lost, or empty while alive or after a plain close */
    public Optional<DiscoException> err() {
        return Optional.ofNullable(core.lossCause());
    }

    /**
     * Stops renewing the lease without revoking it, like etcd's Go {@code Session.Orphan}: the lease
     * expires after its TTL, and then {@link #done()} completes with a loss. Simulates a frozen owner.
     */
    public void orphan() {
        core.orphan();
    }

    /**
     * Revokes the lease (releasing everything held through it), finishes every service of the
     * session and stops the background thread. Waits at most the request timeout for etcd; if etcd
     * does not answer, the lease expires after its TTL instead. Never closes the jetcd client.
     * Idempotent.
     */
    @Override
    public void close() {
        core.close();
    }

    @Override
    public String toString() {
        return core.toString();
    }

    // ---------------------------------------------------------------- inside the provider

    /** What the services of this session depend on. */
    SessionCore core() {
        return core;
    }

    /** Runs {@code task} on the session thread (tests use it to hold that thread). */
    void runOnSession(Runnable task) {
        core.runOnSession(task);
    }

    /** Renews right now. */
    void probeLease() {
        core.probeLease();
    }

    /** The moment, on the local monotonic clock, at which the session considers its lease expired. */
    long validUntilNanos() {
        return core.validUntilNanos();
    }

    /** Go's {@code fmt.Sprintf("%x", leaseID)}. */
    static String hex(long id) {
        return GrantedLease.hex(id);
    }
}

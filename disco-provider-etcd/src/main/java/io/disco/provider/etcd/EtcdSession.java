package io.disco.provider.etcd;

import io.disco.election.ElectionService;
import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Context;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * lost with it.
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
public final class EtcdSession implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdSession.class);

    private final Client client;
    private final long leaseId;
    private final long ttlSeconds;
    private final Duration requestTimeout;
    private final long failoverNanos;
    private final long grantMarginNanos;
    /** Renewal and the expiry check only. */
    private final ScheduledThreadPoolExecutor leaseTimer;
    /** The services' state machines and their request timers. */
    private final ScheduledThreadPoolExecutor worker;
    private final Executor callbacks;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /**
     * The services of this session, by the range their keys lie in ({@code prefix + "/"}), sorted: a
     * nested name is found among its neighbours and its parents, not by a scan of every service.
     */
    private final ConcurrentSkipListMap<String, Member> members = new ConcurrentSkipListMap<>();
    /** Guards the fields below and registration; never held while calling out. */
    private final Object lock = new Object();
    private final LateCreates lateCreates = new LateCreates(this);
    private final WatchLiveness liveness;

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

    private State state = State.ALIVE;
    private DiscoException lossCause;
    private ScheduledFuture<?> renewTask;
    private ScheduledFuture<?> expiryTask;
    private long validUntilNanos;
    /** When the last renewal was answered; and whether its failing for long was reported. */
    private long renewedAtNanos;
    private boolean renewalsFailingReported;
    /** {@link #warnHeldKeyDeleted}'s last WARN and the deletions logged at DEBUG since; session thread only. */
    private long keyDeletionWarnedAt = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
    private int keyDeletionsNotWarned;
    /** Grants waiting for the lease to be valid for at least the grant margin. */
    private final List<CompletableFuture<Void>> awaitingValidity = new ArrayList<>();

    /** Something bound to the session's lifetime (a service). */
    interface Member {
        /** The service's name, whose keys all lie under {@code prefix + "/"}. */
        String prefix();

        /** What the service is called in messages. */
        String kind();

        /** The lease is lost; called on the lease thread: must not block. */
        void sessionLost(DiscoException cause);

        /** The session is being closed; called on the closing thread. */
        void sessionClosed();

        /**
         * Whether the incarnation of {@code key} (one of this service's keys) created at
         * {@code createRevision} belongs to one of its claims or grants; asked by {@link LateCreates}
         * on the session thread.
         *
         * @return a completed future when it does; null when it does not (it is then deleted); an
         *         incomplete one when that is not known yet: ask again once it completes
         */
        CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision);
    }

    /** The threads of every session: no user code may run, and no blocking call may wait, on them. */
    static final class SessionThread extends Thread {
        SessionThread(Runnable r, String name) {
            super(r, name);
            setDaemon(true);
        }
    }

    /** The default callback executor: daemon threads, created as needed, so one blocking callback delays no other. */
    private static final class DefaultCallbacks {
        private static final AtomicInteger COUNT = new AtomicInteger();
        static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "disco-callback-" + COUNT.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    private EtcdSession(Client client, long leaseId, long ttlSeconds, long sentNanos, EtcdOptions options) {
        this.client = client;
        this.leaseId = leaseId;
        this.ttlSeconds = ttlSeconds;
        this.requestTimeout = options.requestTimeout();
        this.failoverNanos = options.failoverAfter().toNanos();
        this.grantMarginNanos = options.grantMargin().map(Duration::toNanos).orElse(TimeUnit.SECONDS.toNanos(ttlSeconds) / 3);
        this.callbacks = options.callbackExecutor().orElse(DefaultCallbacks.POOL);
        this.leaseTimer = singleThread("disco-lease-" + hex(leaseId));
        this.worker = singleThread("disco-session-" + hex(leaseId));
        this.validUntilNanos = sentNanos + TimeUnit.SECONDS.toNanos(ttlSeconds);
        this.renewedAtNanos = System.nanoTime();
        this.liveness = new WatchLiveness(worker, probeTimeoutNanos(failoverNanos));
        this.listeners = options.listeners();
    }

    // ---------------------------------------------------------------- listeners and health

    private final List<EtcdSessionListener> listeners;
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> events = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicBoolean telling = new java.util.concurrent.atomic.AtomicBoolean();

    /** @return whether anyone listens: callers skip building an event's arguments otherwise */
    boolean listened() {
        return !listeners.isEmpty();
    }

    /**
     * Tells every listener of an event, in event order, one event at a time, on the callback
     * executor (never a session thread). Nothing is queued when there is no listener.
     */
    void tell(java.util.function.Consumer<EtcdSessionListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        events.add(() -> {
            for (EtcdSessionListener l : listeners) {
                try {
                    event.accept(l);
                } catch (RuntimeException e) {
                    LOG.warn("a session listener threw", e);
                }
            }
        });
        if (telling.compareAndSet(false, true)) {
            // Batched: events of the next few milliseconds are told together, so a busy service does
            // not wake a callback thread twice per acquisition.
            if (schedule(leaseTimer, () -> deliver(this::tellQueued), EVENT_BATCH_NANOS) == null) {
                deliver(this::tellQueued); // shut down: tell what is left at once
            }
        }
    }

    /** How long events wait to be told together. */
    private static final long EVENT_BATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private void tellQueued() {
        try {
            for (Runnable r; (r = events.poll()) != null; ) {
                r.run();
            }
        } finally {
            telling.set(false);
            if (!events.isEmpty() && telling.compareAndSet(false, true)) {
                deliver(this::tellQueued); // more came while telling: no need to wait for a batch
            }
        }
    }

    /**
     * How long the lease is valid from now, on the local monotonic clock: what a health check asks.
     *
     * @return the remaining validity; zero once lost or closed
     */
    public Duration remainingValidity() {
        synchronized (lock) {
            if (state == State.LOST || state == State.CLOSED) {
                return Duration.ZERO;
            }
            return Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime()));
        }
    }

    /** @return the session's state */
    public State state() {
        synchronized (lock) {
            return state;
        }
    }

    private static ScheduledThreadPoolExecutor singleThread(String name) {
        ScheduledThreadPoolExecutor exec = new ScheduledThreadPoolExecutor(1, r -> new SessionThread(r, name));
        exec.setRemoveOnCancelPolicy(true);
        return exec;
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
     * Grants a lease with the options' TTL and starts keeping it alive.
     *
     * @param client the caller's jetcd client; never closed by this library
     * @param options the TTL and request timeout
     * @return the open session
     * @throws IllegalArgumentException if {@code client} or {@code options} is null
     * @throws DiscoException if etcd refuses the lease or does not answer within the request timeout
     */
    public static EtcdSession open(Client client, EtcdOptions options) {
        EtcdOptions.requireArgument(client, "client");
        EtcdOptions.requireArgument(options, "options");
        long timeoutMs = options.requestTimeout().toMillis();
        long sent = System.nanoTime();
        io.etcd.jetcd.lease.LeaseGrantResponse granted;
        try {
            granted = client.getLeaseClient().grant(options.ttl().getSeconds()).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the lease grant within "
                    + options.requestTimeout().toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while granting an etcd lease", e);
        } catch (ExecutionException e) {
            throw failure("lease grant", e.getCause());
        }
        EtcdSession s = new EtcdSession(client, granted.getID(), granted.getTTL(), sent, options);
        synchronized (s.lock) {
            s.scheduleExpiryCheck();
            s.scheduleRenewal(s.nextRenewalDelay());
        }
        return s;
    }

    /**
     * Creates a lock service on this session. Its key is {@code <prefix>/<lease id in hex>}, as in
     * etcd's Go {@code concurrency.Mutex}, so it contends correctly with {@code etcdctl lock}, Go
     * programs and jetcd's lock client on the same name.
     *
     * @param prefix the lock's name, for example {@code /locks/my-resource}; not blank
     * @return a new lock service; closing it does not close this session
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws IllegalStateException if this session already has a service on {@code prefix}, or is closed or lost
     */
    public LockService newLock(String prefix) {
        return EtcdLockService.create(this, prefix, false);
    }

    /**
     * Creates a read/write lock service on this session, with the algorithm of etcd's Go
     * {@code recipes.RWMutex}: a reader's key is {@code <prefix>/read/<lease id in hex>}, a writer's
     * {@code <prefix>/write/<lease id in hex>}; a reader waits for the last writer that asked before
     * it, a writer for the last owner of either kind. A non-leased marker
     * {@code disco-rwlock-phase:<prefix>}, outside {@code <prefix>/}, gives the readers of one read
     * phase their shared fencing token.
     *
     * @param prefix the read/write lock's name, for example {@code /rwlocks/my-resource}; not blank
     * @return a new read/write lock service; closing it does not close this session
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws IllegalStateException if this session already has a service on {@code prefix}, or is closed or lost
     */
    public RWLockService newRWLock(String prefix) {
        return EtcdRWLockService.create(this, prefix, false);
    }

    /**
     * Creates an election service on this session. Its candidate key is {@code <prefix>/<lease id in hex>}
     * holding the candidate's value, as in etcd's Go {@code concurrency.Election}, so it takes part in
     * the same election as {@code etcdctl elect}, Go programs and jetcd's election client on the same
     * name. The fencing token of a term is the CreateRevision of the winning key.
     *
     * @param prefix the election's name, for example {@code /elections/my-service}; not blank
     * @return a new election service; closing it does not close this session
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws IllegalStateException if this session already has a service on {@code prefix}, or is closed or lost
     */
    public ElectionService newElection(String prefix) {
        return EtcdElectionService.create(this, prefix, false);
    }

    /**
     * Creates a counting semaphore service on this session, compatible with the Go disco semaphore:
     * its holder key is {@code <prefix>/<lease id in hex>}, and a holder is admitted once fewer than
     * {@code limit} keys created before its own remain under {@code <prefix>/}. Each permit also
     * claims a slot (a leased key {@code disco-semaphore-slot:<prefix>/<slot>}, outside the range Go
     * counts) whose token is strictly increasing per slot; the limit is recorded in
     * {@code disco-semaphore-limit:<prefix>}.
     *
     * @param prefix the semaphore's name, for example {@code /semaphores/exports}; not blank
     * @param limit how many may hold a permit at once, at least 1; the same for every service on the name
     * @return a new semaphore service; closing it does not close this session
     * @throws IllegalArgumentException if {@code prefix} is null or blank, {@code limit < 1}, or the name has another limit
     * @throws IllegalStateException if this session already has a service on {@code prefix}, or is closed or lost
     * @throws io.disco.fencing.DiscoException if etcd does not answer the limit check in time
     */
    public SemaphoreService newSemaphore(String prefix, int limit) {
        return EtcdSemaphoreService.create(this, prefix, limit, false);
    }

    /** @return the id of this session's lease */
    public long leaseId() {
        return leaseId;
    }

    /** @return the TTL etcd granted this session's lease */
    public Duration ttl() {
        return Duration.ofSeconds(ttlSeconds);
    }

    /**
     * Completes, once, when the lease is lost or the session is closed. Always completes normally;
     * {@link #err()} tells whether it was a loss.
     *
     * @return a stage completing when the session is finished
     */
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    /** @return the reason the lease was lost, or empty while alive or after a plain close */
    public Optional<DiscoException> err() {
        synchronized (lock) {
            return Optional.ofNullable(lossCause);
        }
    }

    /**
     * Stops renewing the lease without revoking it, like etcd's Go {@code Session.Orphan}: the lease
     * expires after its TTL, and then {@link #done()} completes with a loss. Simulates a frozen owner.
     */
    public void orphan() {
        synchronized (lock) {
            if (state == State.ALIVE) {
                state = State.ORPHANED;
                cancel(renewTask);
            }
        }
    }

    /**
     * Revokes the lease (releasing everything held through it), finishes every service of the
     * session and stops the background thread. Waits at most the request timeout for etcd; if etcd
     * does not answer, the lease expires after its TTL instead. Never closes the jetcd client.
     * Idempotent.
     */
    @Override
    public void close() {
        refuseOnSessionThread("EtcdSession.close()");
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            state = State.CLOSED;
            cancel(renewTask);
            cancel(expiryTask);
            awaitingValidity.forEach(f -> f.completeExceptionally(new DiscoException("session " + this + " is closed")));
            awaitingValidity.clear();
        }
        for (Member m : members.values()) {
            m.sessionClosed();
        }
        // Also after a loss: one detected only here (no renewal answered in time) may have left the
        // lease alive on the server, with its keys; one try, best effort.
        try {
            client.getLeaseClient().revoke(leaseId).get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            if (isLeaseNotFound(e.getCause())) {
                LOG.debug("etcd lease {} was already gone when the session closed", hex(leaseId));
            } else {
                LOG.warn("could not revoke etcd lease {}; it expires after its TTL of {} s", hex(leaseId), ttlSeconds, e);
            }
        } catch (TimeoutException | RuntimeException e) {
            LOG.warn("could not revoke etcd lease {}; it expires after its TTL of {} s", hex(leaseId), ttlSeconds, e);
        }
        lateCreates.close();
        leaseTimer.shutdownNow();
        worker.shutdown();
        tell(l -> l.closed(this));
        deliver(() -> done.complete(null));
    }

    @Override
    public String toString() {
        return "EtcdSession{lease=" + hex(leaseId) + ", ttl=" + ttlSeconds + "s}";
    }

    // ---------------------------------------------------------------- lease keepalive

    private long renewInterval() {
        return Math.max(1, TimeUnit.SECONDS.toNanos(ttlSeconds) / 3);
    }

    /**
     * Renewals keep at least two renewal intervals of validity: the next one is due when the
     * validity falls to that, which is one interval after the last answered renewal was sent, and at
     * once when its answer came later than that. Counting from the answer instead would let a slow
     * answer (a frozen member, a partition) use up the validity before the next renewal is sent.
     */
    private long nextRenewalDelay() {
        assert Thread.holdsLock(lock);
        return Math.max(0, validUntilNanos - 2 * renewInterval() - System.nanoTime());
    }

    private void scheduleRenewal(long delayNanos) {
        assert Thread.holdsLock(lock);
        cancel(renewTask);
        renewTask = schedule(leaseTimer, this::renew, delayNanos);
    }

    private void scheduleExpiryCheck() {
        assert Thread.holdsLock(lock);
        cancel(expiryTask);
        expiryTask = schedule(leaseTimer, this::checkExpiry, validUntilNanos - System.nanoTime());
    }

    /** The moment, on the local monotonic clock, at which the session considers its lease expired. */
    long validUntilNanos() {
        synchronized (lock) {
            return validUntilNanos;
        }
    }

    /** Lease thread. */
    private void renew() {
        long sent = System.nanoTime();
        // A renewal that hangs must not outlive the renewal interval, or one lost request could use up the TTL.
        long timeout = Math.min(requestTimeout.toNanos(), renewInterval());
        // Every copy's stream ends at the renewal's deadline, not later.
        rpc(leaseTimer, "lease keepalive", timeout, true, () -> keepAliveOnce(sent + timeout - System.nanoTime()))
                .whenComplete((r, e) -> renewed(sent, r, e));
    }

    /**
     * jetcd's {@code keepAliveOnce} opens a stream per call and ends it only when an answer comes, so
     * every renewal sent to a member that stopped answering would leave one open stream behind. The
     * stream is opened in a gRPC context that is cancelled at the timeout (and after the answer):
     * gRPC then cancels the call.
     */
    private CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(long timeoutNanos) {
        Context.CancellableContext scope = Context.current().withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS, leaseTimer);
        CompletableFuture<LeaseKeepAliveResponse> answer;
        Context previous = scope.attach();
        try {
            answer = client.getLeaseClient().keepAliveOnce(leaseId);
        } catch (RuntimeException e) {
            scope.cancel(e);
            throw e;
        } finally {
            scope.detach(previous);
        }
        answer.whenComplete((r, e) -> scope.cancel(null));
        return answer;
    }

    /** Lease thread. */
    private void renewed(long sent, LeaseKeepAliveResponse r, Throwable e) {
        DiscoException loss = null;
        List<CompletableFuture<Void>> valid = List.of();
        synchronized (lock) {
            if (state != State.ALIVE) {
                return;
            }
            long now = System.nanoTime();
            if (e == null && r.getTTL() > 0) {
                long until = sent + TimeUnit.SECONDS.toNanos(r.getTTL());
                if (until - validUntilNanos > 0) {
                    validUntilNanos = until;
                    scheduleExpiryCheck();
                }
                renewedAtNanos = now;
                if (listened()) {
                    Duration remaining = Duration.ofNanos(Math.max(0, validUntilNanos - now));
                    tell(l -> l.renewed(this, remaining));
                }
                if (renewalsFailingReported) {
                    renewalsFailingReported = false;
                    LOG.info("renewal of etcd lease {} answered again; {} ms of validity left", hex(leaseId),
                            TimeUnit.NANOSECONDS.toMillis(validUntilNanos - now));
                }
                scheduleRenewal(nextRenewalDelay());
                if (!awaitingValidity.isEmpty() && validUntilNanos - now >= grantMarginNanos) {
                    valid = new ArrayList<>(awaitingValidity);
                    awaitingValidity.clear();
                }
            } else {
                Throwable cause = e == null ? null : unwrap(e.getCause() != null ? e.getCause() : e);
                if (e != null && !isLeaseNotFound(cause)) {
                    // Transient (stream broken, member unreachable, no leader): retry soon; the expiry check decides loss.
                    Duration failingFor = Duration.ofNanos(now - renewedAtNanos);
                    Duration remaining = Duration.ofNanos(Math.max(0, validUntilNanos - now));
                    tell(l -> l.renewalFailing(this, failingFor, remaining, cause));
                    if (!renewalsFailingReported && now - renewedAtNanos > TimeUnit.SECONDS.toNanos(ttlSeconds) / 2) {
                        renewalsFailingReported = true;
                        LOG.warn("renewals of etcd lease {} have failed for {} ms (TTL {} s), lost in {} ms unless one is answered;"
                                + " affects {}: {}", hex(leaseId), TimeUnit.NANOSECONDS.toMillis(now - renewedAtNanos), ttlSeconds,
                                TimeUnit.NANOSECONDS.toMillis(validUntilNanos - now), describeMembers(), String.valueOf(cause));
                    } else {
                        LOG.debug("renewal of etcd lease {} failed, retrying: {}", hex(leaseId), String.valueOf(cause));
                    }
                    scheduleRenewal(Math.min(nextRenewalDelay(), TimeUnit.MILLISECONDS.toNanos(200)));
                    return;
                }
                loss = markLost(new DiscoException("etcd lease " + hex(leaseId) + " no longer exists (revoked, or expired on the server)", cause));
            }
        }
        if (loss != null) {
            announceLoss(loss);
        }
        valid.forEach(f -> f.complete(null));
    }

    /** Lease thread. */
    private void checkExpiry() {
        DiscoException loss;
        synchronized (lock) {
            if (state != State.ALIVE && state != State.ORPHANED) {
                return;
            }
            if (System.nanoTime() - validUntilNanos < 0) {
                scheduleExpiryCheck();
                return;
            }
            loss = markLost(new DiscoException("etcd lease " + hex(leaseId) + " expired: no renewal was answered within its TTL of "
                    + ttlSeconds + " s" + (state == State.ORPHANED ? " (session orphaned)" : "")));
        }
        announceLoss(loss);
    }

    /** etcd's answer for a lease that was revoked or expired, as jetcd reports it. */
    private static boolean isLeaseNotFound(Throwable t) {
        Throwable cause = unwrap(t);
        if (cause instanceof EtcdException) {
            return ((EtcdException) cause).getErrorCode() == ErrorCode.NOT_FOUND;
        }
        return io.grpc.Status.fromThrowable(cause).getCode() == io.grpc.Status.Code.NOT_FOUND;
    }

    /**
     * A key of this session's lease could not be withdrawn, and sending the delete again cannot cure
     * it (etcd refused it: permission denied, authentication failed, any non-transient error): the key
     * would block every other owner of its name for as long as the lease is renewed. So the renewals
     * stop, and the lease, with every key on it, expires on the server within one TTL; the session
     * reports that at once as its loss, with {@code cause}, to every service ({@link #done()},
     * {@link #err()}). A no-op once the session is lost or closed. Any thread.
     */
    void abandonLease(String what, Throwable cause) {
        DiscoException loss;
        synchronized (lock) {
            if (state != State.ALIVE && state != State.ORPHANED) {
                return;
            }
            loss = markLost(new DiscoException("etcd lease " + hex(leaseId) + " given up: the " + what + " was refused and retrying"
                    + " cannot cure it, so the key would block the other owners for as long as the lease was renewed; it is no"
                    + " longer renewed and expires within its TTL of " + ttlSeconds + " s", failure(what, cause)));
        }
        schedule(leaseTimer, () -> announceLoss(loss), 0);
    }

    /** Renews right now, to learn quickly whether the lease still exists. */
    void probeLease() {
        synchronized (lock) {
            if (state == State.ALIVE) {
                scheduleRenewal(0);
            }
        }
    }

    /**
     * Completes once the lease is valid for at least the grant margin: at once when it is, else after
     * a renewal (sent now) extends it; exceptionally with the loss when it is lost first, and with a
     * {@link DiscoException} when the session is closed.
     */
    CompletableFuture<Void> validForGrant() {
        synchronized (lock) {
            if (state == State.ALIVE && validUntilNanos - System.nanoTime() >= grantMarginNanos) {
                return CompletableFuture.completedFuture(null);
            }
            DiscoException finished = finishedCause();
            if (finished != null) {
                return CompletableFuture.failedFuture(finished);
            }
            CompletableFuture<Void> f = new CompletableFuture<>();
            awaitingValidity.add(f);
            LOG.debug("etcd lease {} has less than the grant margin of {} ms of validity left: a grant waits for a renewal",
                    hex(leaseId), TimeUnit.NANOSECONDS.toMillis(grantMarginNanos));
            probeLease();
            return f;
        }
    }

    private DiscoException markLost(DiscoException cause) {
        assert Thread.holdsLock(lock);
        state = State.LOST;
        lossCause = cause;
        cancel(renewTask);
        cancel(expiryTask);
        awaitingValidity.forEach(f -> f.completeExceptionally(cause));
        awaitingValidity.clear();
        return cause;
    }

    /** Tells every service and completes {@link #done()}; outside the lock, on the lease thread. */
    private void announceLoss(DiscoException cause) {
        LOG.warn("{}; lost with it: {}", cause.getMessage(), describeMembers(), cause.getCause());
        lateCreates.close();
        for (Member m : members.values()) {
            m.sessionLost(cause);
        }
        tell(l -> l.lost(this, cause)); // after the services' grantLost and acquisitionFailed
        deliver(() -> done.complete(null));
    }

    private static void cancel(ScheduledFuture<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }

    // ---------------------------------------------------------------- services and shared plumbing

    /**
     * Registers a service. Refused when its keys would fall inside another service's range on this
     * session, or the other's inside its own (one name equal to, or nested under, the other): the two
     * would share or queue behind each other's keys, and one's release could delete the other's key.
     */
    void register(Member member) {
        String range = member.prefix() + "/";
        synchronized (lock) {
            if (state == State.CLOSED || state == State.LOST) {
                throw new IllegalStateException("session " + this + " is " + state.name().toLowerCase() + "; open a new one");
            }
            Map.Entry<String, Member> under = members.ceilingEntry(range); // the first range that may lie under this one
            Member m = under != null && under.getKey().startsWith(range) ? under.getValue() : memberOwning(range);
            if (m != null) {
                String other = m.prefix() + "/";
                throw new IllegalStateException(member.kind() + " '" + member.prefix() + "' and " + m.kind() + " '" + m.prefix()
                        + "' on session " + this + " would share keys: the keys of one lie under '"
                        + (range.length() >= other.length() ? other : range) + "', where the other queues;"
                        + " use one session per owner, or names that are not nested");
            }
            members.put(range, member);
        }
    }

    /** The services of this session, for log messages: "lock /a, election /b", the first ten of many, or "no service". */
    private String describeMembers() {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (Member m : members.values()) {
            if (shown++ == 10) {
                return b.append(" and ").append(members.size() - 10).append(" more services").toString();
            }
            b.append(b.length() == 0 ? "" : ", ").append(m.kind()).append(' ').append(m.prefix());
        }
        return b.length() == 0 ? "no service" : b.toString();
    }

    void unregister(Member member) {
        members.remove(member.prefix() + "/", member);
    }

    /** The service whose range holds {@code key}, or null (at most one: nested names are refused). */
    Member memberOwning(ByteSequence key) {
        return memberOwning(key.toString(StandardCharsets.UTF_8));
    }

    /** The service whose range is {@code key} up to one of its slashes, or null; one lookup per slash. */
    private Member memberOwning(String key) {
        for (int i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) {
            Member m = members.get(key.substring(0, i + 1));
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    /**
     * Logs that a held key was deleted by somebody else (an operator's delete, the lease revoked
     * from outside, which deletes every key of the session at once): at WARN at most once a second,
     * the others at DEBUG and counted in the next WARN. Session thread only.
     */
    void warnHeldKeyDeleted(String message) {
        long now = System.nanoTime();
        if (now - keyDeletionWarnedAt >= TimeUnit.SECONDS.toNanos(1)) {
            keyDeletionWarnedAt = now;
            LOG.warn("{}{}", message, keyDeletionsNotWarned == 0 ? ""
                    : " (" + keyDeletionsNotWarned + " more held keys of this session deleted since the last such warning, logged at DEBUG)");
            keyDeletionsNotWarned = 0;
        } else {
            keyDeletionsNotWarned++;
            LOG.debug("{}", message);
        }
    }

    /** The janitor for create Txns whose outcome is unknown; session thread only. */
    LateCreates lateCreates() {
        return lateCreates;
    }

    /** @return the loss or closure that finished this session, or null while it is usable */
    DiscoException finishedCause() {
        synchronized (lock) {
            switch (state) {
                case LOST:
                    return lossCause;
                case CLOSED:
                    return new DiscoException("session " + this + " is closed");
                default:
                    return null;
            }
        }
    }

    /** Whether the lease was lost (not merely the session closed). */
    boolean isLost() {
        synchronized (lock) {
            return state == State.LOST;
        }
    }

    Client client() {
        return client;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** Runs {@code task} on the session thread; dropped silently once the session is shut down. */
    void runOnSession(Runnable task) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("session {} is shut down; dropped a task", this);
        }
    }

    /** Runs {@code task} on the session thread after {@code delay}; null once the session is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return schedule(worker, task, unit.toNanos(delay));
    }

    private static ScheduledFuture<?> schedule(ScheduledThreadPoolExecutor exec, Runnable task, long delayNanos) {
        try {
            return exec.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /**
     * Runs user-facing work (completing a future the user holds, so its dependent stages) on the
     * callback executor, never on a session thread: a task that the executor would run on one (a
     * direct executor) goes to the default pool instead, and so does a task it rejects.
     */
    void deliver(Runnable task) {
        Runnable guarded = () -> {
            if (onSessionThread()) {
                DefaultCallbacks.POOL.execute(task);
            } else {
                task.run();
            }
        };
        try {
            callbacks.execute(guarded);
        } catch (RejectedExecutionException e) {
            DefaultCallbacks.POOL.execute(task);
        }
    }

    /** @return where user-facing futures complete: the default for {@code *Async} stages of those futures */
    Executor callbackExecutor() {
        return callbacks;
    }

    static boolean onSessionThread() {
        return Thread.currentThread() instanceof SessionThread;
    }

    /** A blocking call made on a session thread would stall (or deadlock) the lease or the services: refuse it. */
    static void refuseOnSessionThread(String call) {
        if (onSessionThread()) {
            throw new IllegalStateException(call + " was called on disco's internal thread " + Thread.currentThread().getName()
                    + ", where it would block the lease or wait for itself; call it from another thread");
        }
    }

    /**
     * Issues an etcd request that is safe to apply more than once (a read, a guarded delete, a create
     * Txn whose late copies the session's janitor deletes), with the session's request timeout; it is
     * sent again while unanswered (see {@link EtcdOptions.Builder#failoverAfter}). The returned future
     * completes on the session thread, exceptionally with a {@link DiscoException} (the jetcd failure
     * as its cause) when the request fails for a reason that sending it again would not change, or
     * gets no answer in time.
     */
    <T> CompletableFuture<T> rpc(String what, Supplier<CompletableFuture<T>> call) {
        return rpc(worker, what, requestTimeout.toNanos(), true, call);
    }

    /** Like {@link #rpc(String, Supplier)}, for a request that must be sent once (a proclamation: a late copy could overwrite a newer value). */
    <T> CompletableFuture<T> rpcOnce(String what, Supplier<CompletableFuture<T>> call) {
        return rpc(worker, what, requestTimeout.toNanos(), false, call);
    }

    private <T> CompletableFuture<T> rpc(ScheduledThreadPoolExecutor on, String what, long timeoutNanos, boolean resend,
                                         Supplier<CompletableFuture<T>> call) {
        return new Request<>(on, what, timeoutNanos, resend && failoverNanos < timeoutNanos, call).start();
    }

    /** At most this many copies of one request are sent. */
    private static final int MAX_ATTEMPTS = 6;
    /** Requests of this session at most in flight; more wait, unsent, their timeouts running. */
    static final int MAX_IN_FLIGHT = 256;
    /** Copies beyond the first, of all this session's requests, at most outstanding at once. */
    static final int MAX_EXTRA_COPIES = 16;

    /** Guards the fields below, which bound what this session has in flight (see {@link Request}). */
    private final Object flight = new Object();
    private final ArrayDeque<Request<?>> unsent = new ArrayDeque<>();
    private int inFlight;
    private int extraCopies;
    /**
     * One request and its copies: the first copy is sent at once, the next after the failover delay
     * without an answer, each later one after twice the previous delay (so at 0, f, 2f, 4f, 8f, 16f),
     * and one at once after a transient failure when no copy is outstanding. The first answer wins.
     *
     * <p>A session has at most {@value #MAX_IN_FLIGHT} service requests in flight, the others waiting
     * in order with their timeouts running, and at most {@value #MAX_EXTRA_COPIES} copies beyond the
     * first outstanding (a copy over that budget is skipped; the next one is tried on schedule); its
     * lease renewals are not counted and never wait. Ten thousand acquisitions started at once would
     * otherwise send ten thousand Txns, each unanswered within the failover delay because of the
     * others, and then up to five copies each: the client stalled under its own traffic, and the
     * lease, renewed through the same client, ran out.
     */
    private final class Request<T> {
        private final ScheduledThreadPoolExecutor on;
        private final String what;
        private final long timeoutNanos;
        private final boolean resend;
        private final Supplier<CompletableFuture<T>> call;
        private final CompletableFuture<T> out = new CompletableFuture<>();
        /** Guards the fields below; private, like every lock of the provider (not the session's lock). */
        private final Object state = new Object();
        private int sent;
        private int outstanding;
        /** Copies beyond the first sent and not answered, counted in {@code extraCopies} until the request ends. */
        private int extraOutstanding;
        /** Whether it holds one of the session's places in flight; under {@code flight}. */
        private boolean flying;
        private ScheduledFuture<?> deadline;
        private ScheduledFuture<?> nextCopy;
        private Throwable lastFailure;

        Request(ScheduledThreadPoolExecutor on, String what, long timeoutNanos, boolean resend, Supplier<CompletableFuture<T>> call) {
            this.on = on;
            this.what = what;
            this.timeoutNanos = timeoutNanos;
            this.resend = resend;
            this.call = call;
        }

        CompletableFuture<T> start() {
            ScheduledFuture<?> timer = schedule(on, this::timedOut, timeoutNanos);
            if (timer == null) {
                out.completeExceptionally(new DiscoException("session " + EtcdSession.this + " is closed"));
                return out;
            }
            synchronized (state) {
                deadline = timer;
            }
            if (!bounded()) {
                send();
                return out;
            }
            out.whenComplete((v, e) -> ended());
            boolean now;
            synchronized (flight) {
                if (out.isDone()) {
                    return out; // timed out already
                }
                now = inFlight < MAX_IN_FLIGHT;
                if (now) {
                    inFlight++;
                    flying = true;
                } else {
                    unsent.add(this);
                }
            }
            if (now) {
                send();
            }
            return out;
        }

        /** Whether the session's bounds apply: to the services' requests, never to the lease's renewals. */
        private boolean bounded() {
            return on == worker;
        }

        /** Frees its place in flight (or in line) and its copies' budget, and sends the next waiting request. */
        private void ended() {
            int extra;
            synchronized (state) {
                extra = extraOutstanding;
                extraOutstanding = 0;
            }
            Request<?> next = null;
            synchronized (flight) {
                extraCopies -= extra;
                if (flying) {
                    flying = false;
                    next = unsent.poll();
                    if (next == null) {
                        inFlight--;
                    } else {
                        next.flying = true; // this request's place passes to the next
                    }
                } else {
                    unsent.remove(this);
                }
            }
            if (next != null) {
                Request<?> n = next;
                try {
                    n.on.execute(n::send);
                } catch (RejectedExecutionException shutDown) {
                    n.send();
                }
            }
        }

        private void send() {
            boolean extra;
            synchronized (state) {
                if (out.isDone() || sent == MAX_ATTEMPTS) {
                    return;
                }
                extra = sent > 0 && bounded();
                boolean skip = false;
                if (extra) {
                    synchronized (flight) {
                        skip = extraCopies >= MAX_EXTRA_COPIES; // over budget: skip this copy, try the next on schedule
                        if (!skip) {
                            extraCopies++;
                            extraOutstanding++;
                        }
                    }
                }
                sent++;
                cancel(nextCopy);
                if (resend && sent < MAX_ATTEMPTS) {
                    nextCopy = schedule(on, this::send, sent <= 2 ? failoverNanos : failoverNanos << (sent - 2));
                }
                if (skip) {
                    return;
                }
                outstanding++;
            }
            CompletableFuture<T> src;
            try {
                src = call.get();
            } catch (RuntimeException e) {
                answered(null, e, extra);
                return;
            }
            src.whenComplete((v, e) -> {
                try {
                    on.execute(() -> answered(v, e, extra));
                } catch (RejectedExecutionException shutDown) {
                    LOG.debug("session {} is shut down; dropped the answer to {}", EtcdSession.this, what);
                }
            });
        }

        private void answered(T value, Throwable error, boolean extra) {
            Throwable failed = null;
            boolean again = false;
            synchronized (state) {
                outstanding--;
                if (extra && extraOutstanding > 0) {
                    extraOutstanding--;
                    synchronized (flight) {
                        extraCopies--;
                    }
                }
                if (out.isDone()) {
                    return;
                }
                if (error != null) {
                    Throwable cause = unwrap(error);
                    lastFailure = cause;
                    if (!resend || !isTransient(cause)) {
                        failed = cause;
                    } else if (outstanding == 0) {
                        again = sent < MAX_ATTEMPTS;
                        failed = again ? null : cause;
                    }
                }
                if (error == null || failed != null) {
                    cancel(deadline);
                    cancel(nextCopy);
                }
            }
            if (error == null) {
                out.complete(value);
            } else if (failed != null) {
                out.completeExceptionally(failure(what, failed));
            } else if (again) {
                LOG.debug("{} failed, sending it again: {}", what, String.valueOf(lastFailure));
                send();
            }
        }

        private void timedOut() {
            Throwable last;
            synchronized (state) {
                cancel(nextCopy);
                last = lastFailure;
            }
            out.completeExceptionally(new DiscoException("etcd could not be reached: no answer to " + what + " within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms" + (last == null ? "" : " (last failure: " + last.getMessage() + ")"),
                    new TimeoutException()));
        }
    }

    /**
     * Issues a request that must eventually be answered (a guarded delete, a read), again and again
     * with a backoff from 100 ms to 2 s, until etcd answers. Completes with the answer, or with null
     * once the session is finished or shut down.
     */
    <T> CompletableFuture<T> untilAnswered(String what, Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> answered = new CompletableFuture<>();
        attempt(what, call, answered, 100);
        return answered;
    }

    private <T> void attempt(String what, Supplier<CompletableFuture<T>> call, CompletableFuture<T> answered, long backoffMs) {
        if (finishedCause() != null) {
            answered.complete(null);
            return;
        }
        rpc(what, call).whenComplete((r, e) -> {
            if (e == null) {
                answered.complete(r);
                return;
            }
            if (!isTransient(e)) {
                LOG.warn("{} failed and is retried every {} ms until the session ends: {}", what, backoffMs, e.getMessage());
            }
            if (schedule(() -> attempt(what, call, answered, Math.min(2000, backoffMs * 2)), backoffMs,
                    TimeUnit.MILLISECONDS) == null) {
                answered.complete(null); // shut down
            }
        });
    }

    /** How long a watch may take to confirm its creation or answer a progress request: twice the failover delay. */
    static long probeTimeoutNanos(long failoverNanos) {
        return 2 * failoverNanos;
    }

    long probeTimeoutNanos() {
        return probeTimeoutNanos(failoverNanos);
    }

    /** How often a watch should be heard from (see {@link WatchLiveness}). */
    enum Silence {
        /** A hand-over waits on it: probed after the probe timeout of silence. */
        WAIT,
        /** It guards against a rare event (a key deleted by somebody else, a late create): probed after 2 s of silence. */
        GUARD
    }

    /**
     * Watches {@code key} with {@code option}, which must ask for the created notification; jetcd
     * calls listeners on its event loop, so both callbacks run on the session thread. {@code onBroken}
     * runs when the watch errors or completes, which includes being closed. A watch whose member
     * stops answering is closed, so it breaks (see {@link WatchLiveness}): nobody waits on a frozen
     * member.
     */
    Watch.Watcher watch(ByteSequence key, WatchOption option, Silence silence, Consumer<WatchResponse> onEvents, Runnable onBroken) {
        if (!option.isCreatedNotify()) {
            throw new IllegalArgumentException("a probed watch must ask for the created notification");
        }
        long silenceNanos = silence == Silence.WAIT ? probeTimeoutNanos(failoverNanos) : TimeUnit.SECONDS.toNanos(2);
        return liveness.open(l -> client.getWatchClient().watch(key, option, l), listener(onEvents, onBroken), silenceNanos,
                () -> LOG.debug("a watch of {} on session {} did not confirm its creation or its member missed a progress"
                        + " request: moving it", key.toString(StandardCharsets.UTF_8), this));
    }

    private Watch.Listener listener(Consumer<WatchResponse> onEvents, Runnable onBroken) {
        return new Watch.Listener() {
            @Override
            public void onNext(WatchResponse response) {
                runOnSession(() -> onEvents.accept(response));
            }

            @Override
            public void onError(Throwable t) {
                runOnSession(onBroken);
            }

            @Override
            public void onCompleted() {
                runOnSession(onBroken);
            }
        };
    }

    static DiscoException failure(String what, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof DiscoException) {
            return (DiscoException) cause;
        }
        if (isAccessDenied(cause)) {
            return new AccessDeniedException("etcd refused the " + what + ": " + cause.getMessage(), cause);
        }
        return new DiscoException("etcd " + what + " failed: " + cause.getMessage(), cause);
    }

    /** The gRPC status code of an etcd failure (jetcd reports them as {@link EtcdException}s), or null for anything else. */
    private static io.grpc.Status.Code statusCode(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof EtcdException) {
                try {
                    return io.grpc.Status.Code.valueOf(((EtcdException) c).getErrorCode().name());
                } catch (IllegalArgumentException unknown) {
                    return io.grpc.Status.Code.UNKNOWN;
                }
            }
            if (c instanceof io.grpc.StatusRuntimeException || c instanceof io.grpc.StatusException) {
                return io.grpc.Status.fromThrowable(c).getCode();
            }
        }
        return null;
    }

    /**
     * Whether sending the request again may succeed: no answer in time, a member or leader that is
     * unavailable, a broken stream, an overloaded server. Not: permission or authentication refused,
     * a bad argument, a failed precondition, compaction, a bug.
     */
    static boolean isTransient(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof DiscoException) {
            return c.getCause() instanceof TimeoutException || (c.getCause() != null && statusCode(c.getCause()) != null
                    && isTransient(c.getCause()));
        }
        io.grpc.Status.Code code = statusCode(c);
        if (code == null) {
            return c instanceof TimeoutException;
        }
        switch (code) {
            case UNAVAILABLE:
            case DEADLINE_EXCEEDED:
            case RESOURCE_EXHAUSTED:
            case ABORTED:
            case CANCELLED:
            case UNKNOWN:
            case INTERNAL:
                return true;
            default:
                return false;
        }
    }

    /** etcd's permission denied, invalid auth token, and "authentication failed, invalid user ID or password". */
    static boolean isAccessDenied(Throwable t) {
        io.grpc.Status.Code code = statusCode(unwrap(t));
        if (code == io.grpc.Status.Code.PERMISSION_DENIED || code == io.grpc.Status.Code.UNAUTHENTICATED) {
            return true;
        }
        String m = String.valueOf(unwrap(t).getMessage());
        return code != null && (m.contains("authentication failed") || m.contains("user name not found")
                || m.contains("permission denied"));
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** Go's {@code fmt.Sprintf("%x", leaseID)}. */
    static String hex(long id) {
        return id < 0 ? "-" + Long.toHexString(-id) : Long.toHexString(id);
    }
}

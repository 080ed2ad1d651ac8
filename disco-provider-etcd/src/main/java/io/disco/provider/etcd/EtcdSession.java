package io.disco.provider.etcd;

import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
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
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
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
    /** Renewal and the expiry check only. */
    private final ScheduledThreadPoolExecutor leaseTimer;
    /** The services' state machines and their request timers. */
    private final ScheduledThreadPoolExecutor worker;
    private final Executor callbacks;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** The services of this session, by prefix. */
    private final ConcurrentHashMap<String, Member> members = new ConcurrentHashMap<>();
    /** Guards the fields below and registration; never held while calling out. */
    private final Object lock = new Object();
    private final LateCreates lateCreates = new LateCreates(this);

    private enum State { ALIVE, ORPHANED, LOST, CLOSED }

    private State state = State.ALIVE;
    private DiscoException lossCause;
    private ScheduledFuture<?> renewTask;
    private ScheduledFuture<?> expiryTask;
    private long validUntilNanos;

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
        this.callbacks = options.callbackExecutor().orElse(DefaultCallbacks.POOL);
        this.leaseTimer = singleThread("disco-lease-" + hex(leaseId));
        this.worker = singleThread("disco-session-" + hex(leaseId));
        this.validUntilNanos = sentNanos + TimeUnit.SECONDS.toNanos(ttlSeconds);
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
            s.scheduleRenewal(s.renewInterval());
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
     * it, a writer for the last owner of either kind. A non-leased marker {@code <prefix>/phase} gives
     * the readers of one read phase their shared fencing token.
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
        boolean revoke;
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            revoke = state != State.LOST;
            state = State.CLOSED;
            cancel(renewTask);
            cancel(expiryTask);
        }
        for (Member m : members.values()) {
            m.sessionClosed();
        }
        if (revoke) {
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
        }
        lateCreates.close();
        leaseTimer.shutdownNow();
        worker.shutdown();
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
        rpc(leaseTimer, "lease keepalive", timeout, () -> keepAliveOnce(timeout))
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
        DiscoException loss;
        synchronized (lock) {
            if (state != State.ALIVE) {
                return;
            }
            if (e == null && r.getTTL() > 0) {
                long until = sent + TimeUnit.SECONDS.toNanos(r.getTTL());
                if (until - validUntilNanos > 0) {
                    validUntilNanos = until;
                    scheduleExpiryCheck();
                }
                scheduleRenewal(renewInterval());
                return;
            }
            Throwable cause = e == null ? null : unwrap(e.getCause() != null ? e.getCause() : e);
            if (e != null && !isLeaseNotFound(cause)) {
                // Transient (stream broken, member unreachable, no leader): retry soon; the expiry check decides loss.
                LOG.debug("renewal of etcd lease {} failed, retrying: {}", hex(leaseId), String.valueOf(e));
                scheduleRenewal(Math.min(renewInterval(), TimeUnit.MILLISECONDS.toNanos(200)));
                return;
            }
            loss = markLost(new DiscoException("etcd lease " + hex(leaseId) + " no longer exists (revoked, or expired on the server)", cause));
        }
        announceLoss(loss);
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

    /** Renews right now, to learn quickly whether the lease still exists. */
    void probeLease() {
        synchronized (lock) {
            if (state == State.ALIVE) {
                scheduleRenewal(0);
            }
        }
    }

    private DiscoException markLost(DiscoException cause) {
        assert Thread.holdsLock(lock);
        state = State.LOST;
        lossCause = cause;
        cancel(renewTask);
        cancel(expiryTask);
        return cause;
    }

    /** Tells every service and completes {@link #done()}; outside the lock, on the lease thread. */
    private void announceLoss(DiscoException cause) {
        LOG.warn("{}", cause.getMessage());
        lateCreates.close();
        for (Member m : members.values()) {
            m.sessionLost(cause);
        }
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
            for (Member m : members.values()) {
                String other = m.prefix() + "/";
                if (range.startsWith(other) || other.startsWith(range)) {
                    throw new IllegalStateException(member.kind() + " '" + member.prefix() + "' and " + m.kind() + " '" + m.prefix()
                            + "' on session " + this + " would share keys: the keys of one lie under '"
                            + (range.length() >= other.length() ? other : range) + "', where the other queues;"
                            + " use one session per owner, or names that are not nested");
                }
            }
            members.put(member.prefix(), member);
        }
    }

    void unregister(Member member) {
        members.remove(member.prefix(), member);
    }

    /** The service whose range holds {@code key}, or null (at most one: nested names are refused). */
    Member memberOwning(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        for (Member m : members.values()) {
            if (k.startsWith(m.prefix() + "/")) {
                return m;
            }
        }
        return null;
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
     * Issues one etcd request with the session's request timeout. The returned future completes on
     * the session thread, exceptionally with a {@link DiscoException} (the jetcd failure as its cause)
     * when the request fails or gets no answer in time.
     */
    <T> CompletableFuture<T> rpc(String what, Supplier<CompletableFuture<T>> call) {
        return rpc(worker, what, requestTimeout.toNanos(), call);
    }

    private <T> CompletableFuture<T> rpc(ScheduledThreadPoolExecutor on, String what, long timeoutNanos,
                                         Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> out = new CompletableFuture<>();
        CompletableFuture<T> src;
        try {
            src = call.get();
        } catch (RuntimeException e) {
            out.completeExceptionally(failure(what, e));
            return out;
        }
        ScheduledFuture<?> timer = schedule(on, () -> out.completeExceptionally(new DiscoException(
                "etcd could not be reached: no answer to " + what + " within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms",
                new TimeoutException())), timeoutNanos);
        if (timer == null) {
            out.completeExceptionally(new DiscoException("session " + this + " is closed"));
            return out;
        }
        src.whenComplete((v, e) -> {
            try {
                on.execute(() -> {
                    timer.cancel(false);
                    if (e == null) {
                        out.complete(v);
                    } else {
                        out.completeExceptionally(failure(what, e));
                    }
                });
            } catch (RejectedExecutionException shutDown) {
                LOG.debug("session {} is shut down; dropped the answer to {} (its timer still fails the request)", this, what);
            }
        });
        return out;
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
            } else if (schedule(() -> attempt(what, call, answered, Math.min(2000, backoffMs * 2)), backoffMs,
                    TimeUnit.MILLISECONDS) == null) {
                answered.complete(null); // shut down
            }
        });
    }

    /**
     * Watches {@code key} with {@code option}; jetcd calls listeners on its event loop, so both
     * callbacks run on the session thread. {@code onBroken} runs when the watch errors or completes.
     */
    Watch.Watcher watch(ByteSequence key, WatchOption option, Consumer<WatchResponse> onEvents, Runnable onBroken) {
        return client.getWatchClient().watch(key, option, new Watch.Listener() {
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
        });
    }

    static DiscoException failure(String what, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof DiscoException) {
            return (DiscoException) cause;
        }
        return new DiscoException("etcd " + what + " failed: " + cause.getMessage(), cause);
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

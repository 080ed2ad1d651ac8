package io.disco.provider.etcd;

import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.grpc.Context;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's lease: granted, renewed on the lease timer, its validity tracked on the local monotonic
 * clock, and its loss detected.
 *
 * <p>Validity counts from the moment the last answered renewal was <em>sent</em>, plus the TTL the
 * server granted, so it never believes in a lease that the server may already have expired (rule 7).
 * A renewal that fails for a transient reason is retried and is not a loss; the lease is lost when the
 * server answers that it no longer exists, or when the local validity passes without an answered
 * renewal. The keeper knows nothing of services: it tells its {@link Observer}.
 *
 * <p>Thread-safe; its state is guarded by a private lock, never held while calling out except to the
 * observer's renewal events, which must not block.
 */
final class LeaseKeeper {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);

    /** What the keeper tells. */
    interface Observer {
        /** A renewal was answered; under the keeper's lock: must not block. */
        void renewed(Duration remaining);

        /** A renewal failed for a transient reason; under the keeper's lock: must not block. */
        void renewalFailing(Duration failingFor, Duration remaining, Throwable cause);

        /** The lease is lost; on the lease timer, outside the lock: must not block. */
        void lost(DiscoException cause);

        /** What is lost with the lease, for log messages. */
        String affected();
    }

    /** A granted lease: its id, the TTL the server granted, and when the grant was sent (System.nanoTime()). */
    record Granted(long id, long ttlSeconds, long sentNanos) {}

    private final Client client;
    private final long leaseId;
    private final long ttlSeconds;
    private final Duration requestTimeout;
    private final long grantMarginNanos;
    private final SessionExecutors executors;
    private final RequestPipeline requests;
    private final Observer observer;
    /** What the session is called in messages. */
    private final String session;

    /** Guards the fields below; private: never an object users can see. */
    private final Object lock = new Object();

    private LeaseState state = LeaseState.ALIVE;
    private DiscoException lossCause;
    private ScheduledFuture<?> renewTask;
    private ScheduledFuture<?> expiryTask;
    private long validUntilNanos;
    /** When the last renewal was answered; and whether its failing for long was reported. */
    private long renewedAtNanos;

    private boolean renewalsFailingReported;
    /** Grants waiting for the lease to be valid for at least the grant margin. */
    private final List<CompletableFuture<Void>> awaitingValidity = new ArrayList<>();
    /** Asked whether the lease still exists: true at the next answered renewal, false once lost or closed. */
    private final List<CompletableFuture<Boolean>> awaitingConfirmation = new ArrayList<>();
    /** The client's connection, to tell the application's closing of the client from a failure. */
    private final EtcdEndpoints endpoints;

    LeaseKeeper(
            Client client,
            Granted granted,
            EtcdOptions options,
            SessionExecutors executors,
            RequestPipeline requests,
            Observer observer,
            String session) {
        this.client = client;
        this.leaseId = granted.id();
        this.ttlSeconds = granted.ttlSeconds();
        this.requestTimeout = options.requestTimeout();
        this.grantMarginNanos =
                options.grantMargin().map(Duration::toNanos).orElse(TimeUnit.SECONDS.toNanos(ttlSeconds) / 3);
        this.executors = executors;
        this.requests = requests;
        this.observer = observer;
        this.session = session;
        this.validUntilNanos = granted.sentNanos() + TimeUnit.SECONDS.toNanos(ttlSeconds);
        this.renewedAtNanos = System.nanoTime();
        this.endpoints = EtcdEndpoints.of(client);
    }

    /**
     * Grants a lease with the options' TTL, waiting at most the request timeout.
     *
     * @throws DiscoException if etcd refuses the lease or does not answer in time
     */
    static Granted grant(Client client, EtcdOptions options) {
        EtcdEndpoints endpoints = EtcdEndpoints.of(client);
        if (endpoints.closed()) {
            throw new IllegalStateException(EtcdEndpoints.CLOSED_FIRST);
        }
        long timeoutNanos = options.requestTimeout().toNanos();
        long sent = System.nanoTime();
        long deadline = sent + timeoutNanos;
        LeaseGrantResponse granted;
        CompletableFuture<LeaseGrantResponse> answer;
        try {
            answer = client.getLeaseClient().grant(options.ttl().getSeconds());
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw closedOr(endpoints, e);
        }
        while (true) {
            // A connection that failed is tried again now, not after gRPC's backoff (up to two minutes): an
            // etcd that answers again gets this grant within a slice.
            endpoints.reconnectNow();
            long left = deadline - System.nanoTime();
            try {
                granted = answer.get(Math.max(0, Math.min(left, GRANT_SLICE_NANOS)), TimeUnit.NANOSECONDS);
                break;
            } catch (TimeoutException e) {
                if (deadline - System.nanoTime() > 0) {
                    continue;
                }
                answer.cancel(false);
                Duration check = Duration.ofNanos(Math.max(
                        TimeUnit.MILLISECONDS.toNanos(200), Math.min(timeoutNanos / 2, TimeUnit.SECONDS.toNanos(1))));
                String why = endpoints.diagnose(check).orElse("no answer");
                throw new DiscoException(
                        endpoints.describe() + " could not be reached (the lease grant was not answered within "
                                + options.requestTimeout().toMillis() + " ms): " + why,
                        e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DiscoException("interrupted while granting an etcd lease", e);
            } catch (ExecutionException e) {
                Throwable cause = EtcdErrors.unwrap(e.getCause());
                if (endpoints.closed() || cause instanceof java.util.concurrent.RejectedExecutionException) {
                    throw closedOr(endpoints, cause);
                }
                if (EtcdErrors.isAccessDenied(cause)) {
                    throw new AccessDeniedException(
                            endpoints.describe() + " denied the lease grant: " + EtcdErrors.deepestMessage(cause)
                                    + " (check the client's user, password and roles)",
                            cause);
                }
                if (EtcdErrors.isTransient(cause)) {
                    String why = endpoints.diagnose(Duration.ofMillis(500)).orElse(String.valueOf(cause.getMessage()));
                    throw new DiscoException(
                            endpoints.describe() + " could not be reached (the lease grant failed): " + why, cause);
                }
                throw new DiscoException(
                        endpoints.describe() + ": the lease grant failed: " + cause.getMessage(), cause);
            }
        }
        return new Granted(granted.getID(), granted.getTTL(), sent);
    }

    /** How long the grant waits between two checks of the connection. */
    private static final long GRANT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    /** The client was closed under a request: that says so; anything else is its own failure. */
    private static RuntimeException closedOr(EtcdEndpoints endpoints, Throwable e) {
        if (endpoints.closed() || e instanceof java.util.concurrent.RejectedExecutionException) {
            return new IllegalStateException(EtcdEndpoints.CLOSED_FIRST, e);
        }
        return e instanceof RuntimeException r ? r : new DiscoException(String.valueOf(e.getMessage()), e);
    }

    /** Go's {@code fmt.Sprintf("%x", leaseID)}: how etcd's Go recipes name a lease in keys. */
    static String hex(long id) {
        return id < 0 ? "-" + Long.toHexString(-id) : Long.toHexString(id);
    }

    /**
     * The least validity a new owner is handed out with: half the TTL the server granted (see
     * {@link #renewBeforeHandOut}).
     */
    long handOutThresholdNanos() {
        return TimeUnit.SECONDS.toNanos(ttlSeconds) / 2;
    }

    /**
     * Before the session is handed out (before {@link #start()}): makes sure its lease is valid for at
     * least {@linkplain #handOutThresholdNanos() half its TTL}. Validity counts from when the grant was
     * sent, so a grant answered late (a cold JVM's first request, a slow link, a busy member) leaves
     * less, or nothing: the session would be handed out nearly dead and declared lost moments later.
     * Then the lease is renewed first, each renewal's send time starting its new validity (copies sent
     * as for every renewal), until it is valid for that long, all within one request timeout. Blocks
     * the opening thread; nothing else knows the session yet.
     *
     * @throws DiscoException if etcd says the lease no longer exists, or no renewal made it valid for
     *     half its TTL within the request timeout; the caller then gives the lease up
     */
    void renewBeforeHandOut() {
        long threshold = handOutThresholdNanos();
        long start = System.nanoTime();
        long grantedWith = validUntilNanos() - start;
        if (grantedWith >= threshold) {
            return;
        }
        long deadline = start + requestTimeout.toNanos();
        int renewals = 0;
        Throwable lastFailure = null;
        while (true) {
            long now = System.nanoTime();
            long left = validUntilNanos() - now;
            if (left >= threshold) {
                LOG.info(
                        "etcd lease {} was granted with {} ms of its TTL of {} s left, under the {} ms a new session is"
                                + " handed out with; renewed {} time(s) in {} ms, it is now valid for {} ms",
                        hex(leaseId),
                        TimeUnit.NANOSECONDS.toMillis(Math.max(0, grantedWith)),
                        ttlSeconds,
                        TimeUnit.NANOSECONDS.toMillis(threshold),
                        renewals,
                        TimeUnit.NANOSECONDS.toMillis(now - start),
                        TimeUnit.NANOSECONDS.toMillis(left));
                return;
            }
            long budget = deadline - now;
            if (budget <= 0) {
                throw notHandedOut(
                        grantedWith,
                        threshold,
                        renewals,
                        "no renewal made it valid for that long within the request" + " timeout of "
                                + requestTimeout.toMillis() + " ms",
                        lastFailure);
            }
            long sent = now;
            LeaseKeepAliveResponse r;
            try {
                r = requests.rpc(
                                executors.leaseTimer,
                                "lease keepalive",
                                budget,
                                true,
                                () -> keepAliveOnce(sent + budget - System.nanoTime()))
                        .get(
                                budget + requestTimeout.toNanos(),
                                TimeUnit.NANOSECONDS); // the rpc's own timeout ends it first
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw notHandedOut(grantedWith, threshold, renewals, "interrupted while renewing it", e);
            } catch (TimeoutException e) {
                throw notHandedOut(
                        grantedWith,
                        threshold,
                        renewals,
                        "no renewal was answered within the request timeout of " + requestTimeout.toMillis() + " ms",
                        lastFailure);
            } catch (ExecutionException e) {
                Throwable failure = EtcdErrors.unwrap(e);
                Throwable cause =
                        failure instanceof DiscoException && failure.getCause() != null ? failure.getCause() : failure;
                if (cause instanceof TimeoutException) { // the rpc's timeout: the deadline has passed
                    throw notHandedOut(
                            grantedWith,
                            threshold,
                            renewals,
                            "no renewal was answered within the request timeout of " + requestTimeout.toMillis()
                                    + " ms",
                            lastFailure);
                }
                if (EtcdErrors.isLeaseNotFound(cause)) {
                    throw notHandedOut(
                            grantedWith, threshold, renewals, "it no longer exists (expired on the server)", cause);
                }
                if (!EtcdErrors.isTransient(cause)) {
                    throw notHandedOut(grantedWith, threshold, renewals, "its renewal failed", cause);
                }
                lastFailure = cause;
                LOG.debug(
                        "renewal of etcd lease {} before it is handed out failed, retrying: {}",
                        hex(leaseId),
                        String.valueOf(cause));
                pause(Math.min(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime()));
                continue;
            }
            if (r.getTTL() <= 0) {
                throw notHandedOut(
                        grantedWith, threshold, renewals, "it no longer exists (expired on the server)", null);
            }
            renewals++;
            synchronized (lock) {
                long until = sent + TimeUnit.SECONDS.toNanos(r.getTTL());
                if (until - validUntilNanos > 0) {
                    validUntilNanos = until;
                }
                renewedAtNanos = System.nanoTime();
            }
        }
    }

    private DiscoException notHandedOut(long grantedWith, long threshold, int renewals, String why, Throwable cause) {
        return new DiscoException(
                "etcd lease " + hex(leaseId) + " was granted with "
                        + TimeUnit.NANOSECONDS.toMillis(Math.max(0, grantedWith))
                        + " ms of its TTL of " + ttlSeconds
                        + " s left (counted from when the grant was sent), under the "
                        + TimeUnit.NANOSECONDS.toMillis(threshold)
                        + " ms (half the TTL) a new session is handed out with, and "
                        + why + (renewals == 0 ? "" : " (" + renewals + " renewal(s) answered)")
                        + ": not handed out, the lease is revoked",
                cause);
    }

    private static void pause(long nanos) {
        if (nanos > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(nanos);
        }
    }

    /**
     * Revokes the lease without waiting for the answer: for a lease that was never handed out (it has no
     * keys), so a failure only leaves it to expire after its TTL.
     */
    void revokeInBackground() {
        try {
            client.getLeaseClient().revoke(leaseId).whenComplete((r, e) -> {
                if (e != null) {
                    LOG.debug(
                            "could not revoke etcd lease {} (never handed out, no keys); it expires after its TTL of {} s: {}",
                            hex(leaseId),
                            ttlSeconds,
                            String.valueOf(e));
                }
            });
        } catch (RuntimeException e) {
            LOG.debug(
                    "could not revoke etcd lease {} (never handed out, no keys): {}", hex(leaseId), String.valueOf(e));
        }
    }

    /** Starts the expiry check and the renewals. */
    void start() {
        synchronized (lock) {
            scheduleExpiryCheck();
            scheduleRenewal(nextRenewalDelay());
        }
    }

    long leaseId() {
        return leaseId;
    }

    long ttlSeconds() {
        return ttlSeconds;
    }

    LeaseState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** @return the reason the lease was lost, or null while alive or after a plain close */
    DiscoException lossCause() {
        synchronized (lock) {
            return lossCause;
        }
    }

    /** How long the lease is valid from now, on the local monotonic clock; zero once lost or closed. */
    Duration remainingValidity() {
        synchronized (lock) {
            if (state.finished()) {
                return Duration.ZERO;
            }
            return Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime()));
        }
    }

    /** The moment, on the local monotonic clock, at which the session considers its lease expired. */
    long validUntilNanos() {
        synchronized (lock) {
            return validUntilNanos;
        }
    }

    /** @return the loss or closure that finished the lease, or null while it is usable */
    DiscoException finishedCause() {
        synchronized (lock) {
            switch (state) {
                case LOST:
                    return lossCause;
                case CLOSED:
                    return new DiscoException("session " + session + " is closed");
                default:
                    return null;
            }
        }
    }

    /**
     * Runs {@code action} under the lease's lock while the lease is not finished, so that nothing
     * registers once it is lost or closed.
     *
     * @throws IllegalStateException if the lease is lost or closed
     */
    void whileUsable(Runnable action) {
        synchronized (lock) {
            if (state.finished()) {
                throw new IllegalStateException("session " + session + " is "
                        + state.name().toLowerCase()
                        + (state == LeaseState.LOST && lossCause != null ? " (" + lossCause.getMessage() + ")" : "")
                        + "; open a new one");
            }
            action.run();
        }
    }

    /** Stops renewing without revoking: the lease runs out (etcd's Go {@code Session.Orphan}). */
    void orphan() {
        synchronized (lock) {
            if (state == LeaseState.ALIVE) {
                state = state.to(LeaseState.ORPHANED);
                SessionExecutors.cancel(renewTask);
            }
        }
    }

    /**
     * Marks the lease closed and stops its timers; a grant waiting for validity fails.
     *
     * @return false if it was closed already
     */
    boolean close() {
        synchronized (lock) {
            if (state == LeaseState.CLOSED) {
                return false;
            }
            state = state.to(LeaseState.CLOSED);
            SessionExecutors.cancel(renewTask);
            SessionExecutors.cancel(expiryTask);
            awaitingValidity.forEach(
                    f -> f.completeExceptionally(new DiscoException("session " + session + " is closed")));
            awaitingValidity.clear();
            awaitingConfirmation.forEach(f -> f.complete(false));
            awaitingConfirmation.clear();
            return true;
        }
    }

    /**
     * Revokes the lease, once, waiting at most the request timeout; also after a loss: one detected
     * only here (no renewal answered in time) may have left the lease alive on the server, with its
     * keys. Best effort: a failure is logged (the lease then expires after its TTL).
     */
    void revoke() {
        if (endpoints.closed()) {
            LOG.debug(
                    "etcd lease {} is not revoked: {}; it expires after its TTL of {} s",
                    hex(leaseId),
                    EtcdEndpoints.CLOSED_FIRST,
                    ttlSeconds);
            return;
        }
        try {
            client.getLeaseClient().revoke(leaseId).get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            if (EtcdErrors.isLeaseNotFound(e.getCause())) {
                LOG.debug("etcd lease {} was already gone when the session closed", hex(leaseId));
            } else {
                LOG.warn(
                        "could not revoke etcd lease {}; it expires after its TTL of {} s",
                        hex(leaseId),
                        ttlSeconds,
                        e);
            }
        } catch (TimeoutException | RuntimeException e) {
            LOG.warn("could not revoke etcd lease {}; it expires after its TTL of {} s", hex(leaseId), ttlSeconds, e);
        }
    }

    // ---------------------------------------------------------------- renewal and expiry

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
        SessionExecutors.cancel(renewTask);
        renewTask = SessionExecutors.schedule(executors.leaseTimer, this::renew, delayNanos);
    }

    private void scheduleExpiryCheck() {
        assert Thread.holdsLock(lock);
        SessionExecutors.cancel(expiryTask);
        expiryTask =
                SessionExecutors.schedule(executors.leaseTimer, this::checkExpiry, validUntilNanos - System.nanoTime());
    }

    /** Lease thread. */
    private void renew() {
        long sent = System.nanoTime();
        // A renewal that hangs must not outlive the renewal interval, or one lost request could use up the TTL.
        long timeout = Math.min(requestTimeout.toNanos(), renewInterval());
        // Every copy's stream ends at the renewal's deadline, not later.
        requests.rpc(
                        executors.leaseTimer,
                        "lease keepalive",
                        timeout,
                        true,
                        () -> keepAliveOnce(sent + timeout - System.nanoTime()))
                .whenComplete((r, e) -> renewed(sent, r, e));
    }

    /**
     * jetcd's {@code keepAliveOnce} opens a stream per call and ends it only when an answer comes, so
     * every renewal sent to a member that stopped answering would leave one open stream behind. The
     * stream is opened in a gRPC context that is cancelled at the timeout (and after the answer):
     * gRPC then cancels the call.
     */
    private CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(long timeoutNanos) {
        Context.CancellableContext scope =
                Context.current().withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS, executors.leaseTimer);
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
        List<CompletableFuture<Boolean>> confirmed = List.of();
        synchronized (lock) {
            if (state != LeaseState.ALIVE) {
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
                observer.renewed(Duration.ofNanos(Math.max(0, validUntilNanos - now)));
                if (renewalsFailingReported) {
                    renewalsFailingReported = false;
                    LOG.info(
                            "renewal of etcd lease {} answered again; {} ms of validity left",
                            hex(leaseId),
                            TimeUnit.NANOSECONDS.toMillis(validUntilNanos - now));
                }
                scheduleRenewal(nextRenewalDelay());
                if (!awaitingValidity.isEmpty() && validUntilNanos - now >= grantMarginNanos) {
                    valid = new ArrayList<>(awaitingValidity);
                    awaitingValidity.clear();
                }
                confirmed = new ArrayList<>(awaitingConfirmation);
                awaitingConfirmation.clear();
            } else {
                Throwable cause = e == null ? null : EtcdErrors.unwrap(e.getCause() != null ? e.getCause() : e);
                if (e != null && (endpoints.closed() || isClosedClient(cause))) {
                    // The application closed the client: no renewal can ever be sent again; no retry loop.
                    loss = markLost(new DiscoException(
                            "etcd lease " + hex(leaseId) + " can no longer be renewed: " + EtcdEndpoints.CLOSED_FIRST));
                } else if (e != null && !EtcdErrors.isLeaseNotFound(cause)) {
                    // Transient (stream broken, member unreachable, no leader): retry soon; the expiry check decides
                    // loss.
                    Duration failingFor = Duration.ofNanos(now - renewedAtNanos);
                    Duration remaining = Duration.ofNanos(Math.max(0, validUntilNanos - now));
                    observer.renewalFailing(failingFor, remaining, cause);
                    if (!renewalsFailingReported && now - renewedAtNanos > TimeUnit.SECONDS.toNanos(ttlSeconds) / 2) {
                        renewalsFailingReported = true;
                        LOG.warn(
                                "renewals of etcd lease {} have failed for {} ms (TTL {} s), lost in {} ms unless one is answered;"
                                        + " affects {}: {}",
                                hex(leaseId),
                                TimeUnit.NANOSECONDS.toMillis(now - renewedAtNanos),
                                ttlSeconds,
                                TimeUnit.NANOSECONDS.toMillis(validUntilNanos - now),
                                observer.affected(),
                                String.valueOf(cause));
                    } else {
                        LOG.debug("renewal of etcd lease {} failed, retrying: {}", hex(leaseId), String.valueOf(cause));
                    }
                    scheduleRenewal(Math.min(nextRenewalDelay(), TimeUnit.MILLISECONDS.toNanos(200)));
                    return;
                } else {
                    loss = markLost(notFound(now, cause));
                }
            }
        }
        if (loss != null) {
            observer.lost(loss);
        }
        valid.forEach(f -> f.complete(null));
        confirmed.forEach(f -> f.complete(true));
    }

    /**
     * etcd says the lease no longer exists: expired there, or revoked. When its validity has run out here
     * too (the process was paused, or its renewals went unanswered), it expired; while it had validity left
     * here, somebody revoked it (an operator's {@code etcdctl lease revoke}, another process), or etcd
     * expired it earlier than this process could know.
     */
    private DiscoException notFound(long now, Throwable cause) {
        assert Thread.holdsLock(lock);
        long left = validUntilNanos - now;
        if (left <= 0) {
            return new DiscoException(
                    "etcd lease " + hex(leaseId) + " expired: no renewal was answered within its TTL of " + ttlSeconds
                            + " s (etcd no longer knows it; the process was paused, or etcd unreachable, for longer)",
                    cause);
        }
        return new DiscoException(
                "etcd lease " + hex(leaseId) + " no longer exists on the server: revoked (by an operator or"
                        + " another process), or expired there although " + TimeUnit.NANOSECONDS.toMillis(left)
                        + " ms of its TTL of "
                        + ttlSeconds + " s were left here",
                cause);
    }

    /** jetcd's failures once its client is closed: its executor rejects the call, or its channel is shut down. */
    private static boolean isClosedClient(Throwable cause) {
        return cause instanceof java.util.concurrent.RejectedExecutionException
                || String.valueOf(cause == null ? null : cause.getMessage()).contains("Channel shutdown invoked");
    }

    /**
     * The application closed the client: the lease is lost at once, with that reason (told on the lease
     * timer). A no-op once the lease is lost or closed. Any thread.
     *
     * @return the loss, or null if the lease was already finished
     */
    DiscoException clientClosed() {
        DiscoException loss;
        synchronized (lock) {
            if (state != LeaseState.ALIVE && state != LeaseState.ORPHANED) {
                return null;
            }
            loss = markLost(new DiscoException(
                    "etcd lease " + hex(leaseId) + " can no longer be renewed: " + EtcdEndpoints.CLOSED_FIRST));
        }
        return loss;
    }

    /**
     * Whether the lease still exists, asked now: completes true at the next answered renewal (sent at
     * once), false once the lease is lost (etcd does not know it, or its validity ran out) or closed.
     */
    CompletableFuture<Boolean> confirm() {
        synchronized (lock) {
            if (state != LeaseState.ALIVE) {
                return CompletableFuture.completedFuture(false);
            }
            CompletableFuture<Boolean> f = new CompletableFuture<>();
            awaitingConfirmation.add(f);
            scheduleRenewal(0);
            return f;
        }
    }

    /** Lease thread. */
    private void checkExpiry() {
        DiscoException loss;
        synchronized (lock) {
            if (state != LeaseState.ALIVE && state != LeaseState.ORPHANED) {
                return;
            }
            if (System.nanoTime() - validUntilNanos < 0) {
                scheduleExpiryCheck();
                return;
            }
            loss = markLost(new DiscoException(
                    "etcd lease " + hex(leaseId) + " expired: no renewal was answered within its TTL of " + ttlSeconds
                            + " s" + (state == LeaseState.ORPHANED ? " (session orphaned)" : "")));
        }
        observer.lost(loss);
    }

    /**
     * A key of this lease could not be withdrawn, and sending the delete again cannot cure it (etcd
     * refused it: permission denied, authentication failed, any non-transient error): the key would
     * block every other owner of its name for as long as the lease is renewed. So the renewals stop,
     * and the lease, with every key on it, expires on the server within one TTL; the loss, with
     * {@code cause}, is told at once (on the lease timer) as the lease's loss. A no-op once the lease
     * is lost or closed. Any thread.
     */
    void abandon(String what, Throwable cause) {
        DiscoException loss;
        synchronized (lock) {
            if (state != LeaseState.ALIVE && state != LeaseState.ORPHANED) {
                return;
            }
            loss = markLost(new DiscoException(
                    "etcd lease " + hex(leaseId) + " given up: the " + what + " was refused and retrying"
                            + " cannot cure it, so the key would block the other owners for as long as the lease was renewed; it is no"
                            + " longer renewed and expires within its TTL of " + ttlSeconds + " s",
                    EtcdErrors.failure(what, cause)));
        }
        SessionExecutors.schedule(executors.leaseTimer, () -> observer.lost(loss), 0);
    }

    /** Renews right now, to learn quickly whether the lease still exists. */
    void probe() {
        synchronized (lock) {
            if (state == LeaseState.ALIVE) {
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
            if (state == LeaseState.ALIVE && validUntilNanos - System.nanoTime() >= grantMarginNanos) {
                return CompletableFuture.completedFuture(null);
            }
            DiscoException finished = finishedCause();
            if (finished != null) {
                return CompletableFuture.failedFuture(finished);
            }
            CompletableFuture<Void> f = new CompletableFuture<>();
            awaitingValidity.add(f);
            LOG.debug(
                    "etcd lease {} has less than the grant margin of {} ms of validity left: a grant waits for a renewal",
                    hex(leaseId),
                    TimeUnit.NANOSECONDS.toMillis(grantMarginNanos));
            probe();
            return f;
        }
    }

    private DiscoException markLost(DiscoException cause) {
        assert Thread.holdsLock(lock);
        state = state.to(LeaseState.LOST);
        lossCause = cause;
        SessionExecutors.cancel(renewTask);
        SessionExecutors.cancel(expiryTask);
        awaitingValidity.forEach(f -> f.completeExceptionally(cause));
        awaitingValidity.clear();
        awaitingConfirmation.forEach(f -> f.complete(false));
        awaitingConfirmation.clear();
        return cause;
    }
}

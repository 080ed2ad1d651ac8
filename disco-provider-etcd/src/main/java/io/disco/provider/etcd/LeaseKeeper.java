package io.disco.provider.etcd;

import static io.disco.provider.etcd.GrantedLease.hex;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's lease while the session keeps it: renewed on the lease timer, its validity tracked on the
 * local monotonic clock, and its loss detected; its {@link LeaseState} (every move checked). Its duties:
 * schedule the renewals ({@link KeepAlive}, one request each) and the expiry check, count the validity,
 * answer whether the lease is valid enough for a grant ({@link #validForGrant}) or still exists
 * ({@link #confirm}), mark the loss ({@link LeaseLoss} says why) and tell it, orphan and close. The lease's
 * grant is {@link GrantedLease}, its renewals before the hand-out {@link HandOutRenewal}, its revoke
 * {@link LeaseRevocation}.
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

    private final KeepAlive keepAlive;
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
            GrantedLease granted,
            KeepAlive keepAlive,
            EtcdOptions options,
            SessionExecutors executors,
            RequestPipeline requests,
            Observer observer,
            String session) {
        this.keepAlive = keepAlive;
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
     * A renewal sent at {@code sent} before the session was handed out ({@link HandOutRenewal}) was answered
     * with {@code grantedTtlSeconds}: the lease is valid from then on for that long.
     */
    void renewedBeforeHandOut(long sent, long grantedTtlSeconds) {
        synchronized (lock) {
            long until = sent + TimeUnit.SECONDS.toNanos(grantedTtlSeconds);
            if (until - validUntilNanos > 0) {
                validUntilNanos = until;
            }
            renewedAtNanos = System.nanoTime();
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
                        () -> keepAlive.once(sent + timeout - System.nanoTime()))
                .whenComplete((r, e) -> renewed(sent, r, e));
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
                if (e != null && (endpoints.closed() || LeaseLoss.isClosedClient(cause))) {
                    // The application closed the client: no renewal can ever be sent again; no retry loop.
                    loss = markLost(LeaseLoss.clientClosed(leaseId));
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
                    loss = markLost(LeaseLoss.notFound(leaseId, ttlSeconds, validUntilNanos - now, cause));
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
            loss = markLost(LeaseLoss.clientClosed(leaseId));
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
            loss = markLost(LeaseLoss.expired(leaseId, ttlSeconds, state == LeaseState.ORPHANED));
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
            loss = markLost(LeaseLoss.givenUp(leaseId, ttlSeconds, what, cause));
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

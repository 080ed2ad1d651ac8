package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The renewals of a new session's lease before it is handed out: a new owner is handed out with at least
 * half its TTL of validity left (validity counts from when the grant was sent, so a grant answered late
 * leaves less). Its duty is {@link #run}: renew until the {@link LeaseKeeper} counts that much validity,
 * within one request timeout, or fail saying why (the caller then gives the lease up). Runs once, on the
 * opening thread, before the keeper starts.
 */
final class HandOutRenewal {

    private static final Logger LOG = LoggerFactory.getLogger(HandOutRenewal.class);

    private final LeaseKeeper lease;
    private final KeepAlive keepAlive;
    private final RequestPipeline requests;
    private final ScheduledThreadPoolExecutor leaseTimer;
    private final long leaseId;
    private final long ttlSeconds;
    private final Duration requestTimeout;

    HandOutRenewal(
            LeaseKeeper lease,
            KeepAlive keepAlive,
            RequestPipeline requests,
            ScheduledThreadPoolExecutor leaseTimer,
            Duration requestTimeout) {
        this.lease = lease;
        this.keepAlive = keepAlive;
        this.requests = requests;
        this.leaseTimer = leaseTimer;
        this.leaseId = lease.leaseId();
        this.ttlSeconds = lease.ttlSeconds();
        this.requestTimeout = requestTimeout;
    }

    /**
     * The least validity a new owner is handed out with: half the TTL the server granted (see
     * {@link #run}).
     */
    long handOutThresholdNanos() {
        return TimeUnit.SECONDS.toNanos(ttlSeconds) / 2;
    }

    /**
     * Before the session is handed out (before {@link LeaseKeeper#start()}): makes sure its lease is valid for at
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
    void run() {
        long threshold = handOutThresholdNanos();
        long start = System.nanoTime();
        long grantedWith = lease.validUntilNanos() - start;
        if (grantedWith >= threshold) {
            return;
        }
        long deadline = start + requestTimeout.toNanos();
        int renewals = 0;
        Throwable lastFailure = null;
        while (true) {
            long now = System.nanoTime();
            long left = lease.validUntilNanos() - now;
            if (left >= threshold) {
                LOG.info(
                        "etcd lease {} was granted with {} ms of its TTL of {} s left, under the {} ms a new session is"
                                + " handed out with; renewed {} time(s) in {} ms, it is now valid for {} ms",
                        GrantedLease.hex(leaseId),
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
                                leaseTimer,
                                "lease keepalive",
                                budget,
                                true,
                                () -> keepAlive.once(sent + budget - System.nanoTime()))
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
                        GrantedLease.hex(leaseId),
                        String.valueOf(cause));
                pause(Math.min(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime()));
                continue;
            }
            if (r.getTTL() <= 0) {
                throw notHandedOut(
                        grantedWith, threshold, renewals, "it no longer exists (expired on the server)", null);
            }
            renewals++;
            lease.renewedBeforeHandOut(sent, r.getTTL());
        }
    }

    private DiscoException notHandedOut(long grantedWith, long threshold, int renewals, String why, Throwable cause) {
        return new DiscoException(
                "etcd lease " + GrantedLease.hex(leaseId) + " was granted with "
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
}

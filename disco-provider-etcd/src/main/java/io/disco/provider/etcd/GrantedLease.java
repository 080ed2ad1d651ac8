package io.disco.provider.etcd;

import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A lease as etcd granted it, before a session keeps it: its id, the TTL the server granted, and when the
 * grant was sent (System.nanoTime()), from which its validity counts (rule 7). Its duties: the grant
 * request itself ({@link #grant}: one request, waited for at most the request timeout, with a failure that
 * says why, naming the endpoints), and the lease id's form in keys and messages ({@link #hex}).
 */
record GrantedLease(long id, long ttlSeconds, long sentNanos) {

    /**
     * Grants a lease with the options' TTL, waiting at most the request timeout.
     *
     * @throws DiscoException if etcd refuses the lease or does not answer in time
     */
    static GrantedLease grant(Client client, EtcdOptions options) {
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
        return new GrantedLease(granted.getID(), granted.getTTL(), sent);
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
}

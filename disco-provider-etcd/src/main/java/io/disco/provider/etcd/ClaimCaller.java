package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The caller's side of one claim: how a blocking or try-only acquisition waits for its {@link QueueClaim}
 * ({@link #await}, {@link #join}). Its duties: on a timeout or an interruption, withdraw the claim and wait
 * (bounded by the request timeout) until its key is deleted, so the caller sees no key left behind; when
 * the caller's timeout ran out before etcd answered the create Txn, make the one real try a try-only
 * acquisition makes; tell an unreachable etcd from a timeout; turn the claim's failure into the exception
 * the caller sees.
 *
 * @param <G> the grant type
 */
final class ClaimCaller<G> {

    private final QueueClaim<G> claim;
    private final SessionCore session;
    private final ClaimResult<G> result;

    ClaimCaller(QueueClaim<G> claim) {
        this.claim = claim;
        this.session = claim.session;
        this.result = claim.result;
    }

    /**
     * Waits for the attempt like a blocking acquire: forever, or at most {@code timeout}. On timeout
     * or interruption the claim is withdrawn and, when etcd was answering, this waits (bounded by the
     * request timeout) until the own key is deleted, so the caller sees no key left behind.
     */
    G await(Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return session.await(result, timeout == null ? -1 : timeout.toNanos());
        } catch (InterruptedException e) {
            if (!result.cancel(true)) {
                Thread.currentThread().interrupt();
                return result.join();
            }
            awaitSettled();
            throw e;
        } catch (TimeoutException e) {
            if (timeout != null) { // unanswered yet, or answered first and the grant's last step not done
                G now = oneRealTry();
                if (now != null) {
                    return now;
                }
            }
            if (!result.cancel(true)) {
                return result.join();
            }
            awaitSettled();
            if (!claim.answered()) {
                throw new DiscoException(
                        "etcd could not be reached: no answer within " + timeout.toMillis() + " ms", e);
            }
            throw e;
        } catch (ExecutionException e) {
            throw unchecked(e.getCause());
        } catch (CancellationException e) {
            throw new IllegalStateException("the acquisition was withdrawn (service closed)", e);
        }
    }

    /**
     * The caller's timeout ran out before the claim was granted, and before etcd said another owner is ahead (a
     * timeout shorter than a round trip, {@code tryLock(1 ms)}: the create Txn unanswered, or answered first with the
     * grant's last step, the lease's validity, still pending): as {@code tryLock()} does, wait for that answer, at
     * most the request timeout from the claim's start, and take a grant that needs no waiting behind another owner. The timeout bounds the
     * wait behind others, never the one try.
     *
     * @return the grant, or null when another owner is ahead (or no answer came)
     */
    private G oneRealTry() {
        long deadline = claim.startedNanos + session.requestTimeout().toNanos();
        try {
            session.await(
                    CompletableFuture.anyOf(claim.firstAnswer(), result), Math.max(0, deadline - System.nanoTime()));
            if (claim.firstAnswer().getNow(true)) {
                return null; // another owner is ahead, or the attempt failed (the caller reads it from result)
            }
            return session.await(result, Math.max(0, deadline - System.nanoTime()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (TimeoutException | ExecutionException e) {
            return null;
        }
    }

    /** Waits for an attempt that cannot wait on others (try-only); bounded by the request timeouts. */
    G join() {
        try {
            return result.join();
        } catch (CompletionException e) {
            throw unchecked(e.getCause());
        }
    }

    private void awaitSettled() {
        if (!claim.answered()) {
            return;
        }
        try {
            claim.settled().get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the delete goes on in the background
        }
    }

    static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new DiscoException(String.valueOf(t.getMessage()), t);
    }
}

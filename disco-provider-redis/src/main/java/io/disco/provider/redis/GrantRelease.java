package io.disco.provider.redis;

import io.disco.core.internal.SessionThread;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The service's side of a release (issue 44): the held grant is given up at once ({@link GrantLedger}) and its
 * {@link ClaimRelease} sent; a synchronous caller waits for its confirmation at most the request timeout and
 * uninterruptibly, and is told when no answer came in time (the delete then goes on in the background, and the
 * next acquisition waits for it). How the release ended decides what follows: confirmed, the acquisition waiting
 * for it goes on; found to be a loss, the service is lost ({@link GrantLoss}). Redis never refuses a release for
 * good, so the ledger's "held again" is not used here.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
final class GrantRelease<G extends Fenced, E extends DiscoException> implements ClaimRelease.Owner<G> {

    private final SessionCore core;
    private final ClaimProtocol<G> protocol;
    private final GrantLedger<G, HeldClaim<G>, QueueClaim<G>, ClaimRelease<G>, E> ledger;
    private final GrantLoss<G, E> loss;
    private final GrantEvents events;

    GrantRelease(
            SessionCore core,
            ClaimProtocol<G> protocol,
            GrantLedger<G, HeldClaim<G>, QueueClaim<G>, ClaimRelease<G>, E> ledger,
            GrantLoss<G, E> loss,
            GrantEvents events) {
        this.events = events;
        this.core = core;
        this.protocol = protocol;
        this.ledger = ledger;
        this.loss = loss;
    }

    /**
     * Releases the held grant of {@code kind}. The grant is given up at once: nothing is handed out from it. Waits
     * for the release to be confirmed, at most the request timeout and uninterruptibly (an interrupted caller waits
     * all the same and keeps its interrupt status); returns if it is, throws the loss if the claim was gone before
     * the release (or the session ended with it), and a {@link DiscoException} saying so when no answer came in
     * time. Called again while the release is unconfirmed, waits for it once more; with nothing held, returns.
     */
    void release(ClaimKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        GrantLedger.ReleaseStep<ClaimRelease<G>, HeldClaim<G>> step =
                ledger.release(held -> held.kind() == kind, held -> newRelease(held, call));
        if (step == null) {
            return;
        }
        if (step.mismatch() != null) {
            throw new IllegalStateException(call + ": this service holds a "
                    + protocol.modeName(step.mismatch().kind())
                    + " grant of the " + protocol.what() + " on " + protocol.name + ", not a "
                    + protocol.modeName(kind) + " one; nothing was released");
        }
        ClaimRelease<G> r = step.release();
        if (step.first()) {
            r.start();
        } else {
            r.nudge();
        }
        await(r, call);
    }

    /** Makes the release of {@code held} (under the ledger's monitor); {@code call} names the caller in a failure. */
    ClaimRelease<G> newRelease(HeldClaim<G> held, String call) {
        return new ClaimRelease<>(core, this, protocol.name, held);
    }

    /**
     * The release a close leaves behind: sent ({@code first}) or nudged, then waited for as long as a release call
     * would, but without an outcome (off the session's thread only).
     */
    void onClose(ClaimRelease<G> r, boolean first) {
        if (first) {
            r.start();
        } else {
            r.nudge();
        }
        if (!SessionThread.onSessionThread()) {
            awaitQuietly(r); // unconfirmed after the request timeout: it goes on in the background
        }
    }

    private void await(ClaimRelease<G> r, String call) {
        Duration timeout = core.requestTimeout();
        try {
            confirmedWithin(r, timeout); // a release is not given up half-way: an interrupted caller waits on
        } catch (TimeoutException e) {
            r.giveUp();
            throw new DiscoException(
                    core.where() + " did not answer the release ("
                            + call + ") of the " + protocol.what() + " on " + protocol.name + " within "
                            + timeout.toMillis()
                            + " ms: the grant (" + r.held.grant().token()
                            + ") is given up, this owner no longer holds it and"
                            + " its token must not be used; the delete of its claim " + r.held.key()
                            + " goes on in the background"
                            + " until Redis answers or the session ends, and the next acquisition of this service waits"
                            + " for it, then claims anew with a new token (calling " + call
                            + " again waits for the same"
                            + " release once more)",
                    e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            ledger.reported(cause);
            throw cause instanceof RuntimeException re ? re : new DiscoException(String.valueOf(cause), cause);
        }
    }

    /** Waits for a release as a close does: at most the request timeout, keeping an interruption; no outcome. */
    private void awaitQuietly(ClaimRelease<G> r) {
        try {
            confirmedWithin(r, core.requestTimeout());
        } catch (TimeoutException | ExecutionException e) {
            // unconfirmed: it goes on in the background
        }
    }

    /**
     * Waits up to {@code timeout} for {@code r} to be confirmed, uninterruptibly: an interruption meanwhile is kept
     * in the thread's status.
     */
    private static void confirmedWithin(ClaimRelease<?> r, Duration timeout)
            throws TimeoutException, ExecutionException {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    r.confirmed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The end of a release, on whatever thread learned it: confirmed (the acquisition waiting for it goes on), or
     * found to be a loss (the claim was gone before it, the session ended).
     */
    @Override
    public void releaseEnded(ClaimRelease<G> r, ClaimRelease.Outcome outcome) {
        switch (outcome) {
            case DELETED -> {
                if (r.firstEnd()) {
                    events.ended(r.held.sinceNanos(), null);
                }
                QueueClaim<G> waiting = ledger.confirmed(r);
                r.confirmed.complete(null);
                if (waiting != null) {
                    waiting.wake.release();
                }
            }
            case GONE_BEFORE ->
                loss.lose(
                        "its claim " + r.held.key() + " was gone before the release (deleted by somebody else, or"
                                + " expired)",
                        null);
            case SESSION_ENDED -> {
                DiscoException sessionLoss = core.lossOrNull();
                loss.lose(
                        sessionLoss != null
                                ? "the Redis session was lost: " + sessionLoss.getMessage()
                                : "the Redis session ended while its claim " + r.held.key() + " was being released",
                        sessionLoss);
            }
        }
        ledger.over(r);
        if (outcome == ClaimRelease.Outcome.DELETED) {
            r.confirmed.complete(null);
            return;
        }
        // Lost by another path meanwhile (the session's loss), which took this release and completes it with that
        // loss, maybe after this line: its caller learns the loss, whoever completes first. Closed meanwhile
        // instead: nothing is lost any more, the release is over all the same.
        ledger.loss().ifPresentOrElse(r.confirmed::completeExceptionally, () -> r.confirmed.complete(null));
    }
}

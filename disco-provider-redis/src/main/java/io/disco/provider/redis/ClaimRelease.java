package io.disco.provider.redis;

import io.disco.core.internal.grant.Release;
import io.disco.fencing.Fenced;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The release of a queue service's grant (issue 44), as it is sent to Redis: from its start the grant is given up
 * (the service holds nothing and hands nothing out from it), the claim is renewed no more, and the release script,
 * guarded by the owner and the token the grant was handed out with (only that claim is deleted, with its semaphore
 * slot), is sent until its outcome is known. That outcome is <em>confirmed</em> when the script answers that it
 * deleted the claim, or that the claim is gone after a copy that may have been applied (one unanswered within the
 * request timeout, or failed without an answer); for the first copy, with none before it, a claim already gone was
 * the grant's loss. Copies go one at a time, the next after a back-off of 0.1 s doubling to 2 s, or at once when an
 * acquisition nudges it; until the session ends. Answers come on Lettuce's threads; a confirmation is handled there
 * (it completes futures and wakes an acquisition, under the ledger's monitor, and queues the listeners' event:
 * nothing blocks, no user code runs), every other answer on the session's thread.
 *
 * @param <G> the grant
 */
final class ClaimRelease<G extends Fenced> implements Release<HeldClaim<G>> {

    /** How a release ended. */
    enum Outcome {
        /** The claim was deleted by this release (one of its copies). */
        DELETED,
        /** The claim was gone before the first copy reached Redis: the grant had been lost. */
        GONE_BEFORE,
        /** The session ended while the release was unconfirmed. */
        SESSION_ENDED
    }

    /** Who hears how the release ended: the service's side of it. */
    interface Owner<G extends Fenced> {
        void releaseEnded(ClaimRelease<G> release, Outcome outcome);
    }

    private static final long FIRST_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 2_000;

    private final SessionCore core;
    private final Owner<G> owner;
    private final String name;
    final HeldClaim<G> held;
    /**
     * Completes when the release is confirmed; exceptionally with the service's loss when the grant turns out to
     * have been lost (or the session with it).
     */
    final CompletableFuture<Void> confirmed = new CompletableFuture<>();

    private final Object lock = new Object();
    private boolean inFlight;
    private boolean maybeApplied;
    private boolean finished;
    private ScheduledFuture<?> retry;
    private long backoffMs = FIRST_BACKOFF_MS;
    private final AtomicBoolean endReported = new AtomicBoolean();
    private volatile boolean givenUp;

    ClaimRelease(SessionCore core, Owner<G> owner, String name, HeldClaim<G> held) {
        this.core = core;
        this.owner = owner;
        this.name = name;
        this.held = held;
    }

    /** Sends the first copy; returns at once. */
    void start() {
        core.liveness().unregister(held.key());
        send();
    }

    /** Sends the next copy now, if one waits for its back-off (an acquisition wants the release confirmed). */
    void nudge() {
        synchronized (lock) {
            if (finished || inFlight || retry == null) {
                return;
            }
            retry.cancel(false);
            retry = null;
        }
        send();
    }

    /** The claim was seen gone (a break's message): the release, once a copy may have been applied. */
    void seenGone() {
        synchronized (lock) {
            if (!maybeApplied) {
                return; // the copy in flight decides
            }
        }
        finish(Outcome.DELETED);
    }

    /** Stops sending: the service ended the release (its loss, the session's end). */
    void stop() {
        synchronized (lock) {
            finished = true;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
        }
    }

    @Override
    public HeldClaim<G> held() {
        return held;
    }

    /** @return whether this is the first report of the grant's end (released or lost): the listeners hear it once */
    boolean firstEnd() {
        return endReported.compareAndSet(false, true);
    }

    void giveUp() {
        givenUp = true;
    }

    @Override
    public boolean givenUp() {
        return givenUp;
    }

    @Override
    public boolean maybeApplied() {
        synchronized (lock) {
            return maybeApplied;
        }
    }

    private void send() {
        synchronized (lock) {
            if (finished || inFlight) {
                return;
            }
            inFlight = true;
            retry = null;
        }
        if (core.linkClosed()) {
            finish(Outcome.SESSION_ENDED);
            return;
        }
        CompletableFuture<List<Object>> answer;
        try {
            answer = Scripts.RELEASE.run(core.link().commands(), name, held.id(), core.ownerText(), held.tokenText());
        } catch (RuntimeException e) {
            notSent();
            return;
        }
        answer.orTimeout(core.requestTimeout().toNanos(), TimeUnit.NANOSECONDS).whenComplete((a, e) -> {
            if (e == null && "deleted".equals(String.valueOf(a.get(0)))) {
                answered(a, null); // confirmed: handled where it arrived (it only completes futures and wakes)
            } else {
                core.onSessionThread(() -> answered(a, e));
            }
        });
    }

    private void notSent() {
        synchronized (lock) {
            inFlight = false;
        }
        later();
    }

    private void answered(List<Object> answer, Throwable e) {
        Outcome end = null;
        synchronized (lock) {
            inFlight = false;
            if (finished) {
                return;
            }
            if (e != null) {
                maybeApplied = true; // unanswered, or an error that may follow an applied copy: the next copy tells
            } else if ("deleted".equals(String.valueOf(answer.get(0)))) {
                end = Outcome.DELETED;
            } else {
                end = maybeApplied ? Outcome.DELETED : Outcome.GONE_BEFORE;
            }
        }
        if (end != null) {
            finish(end);
        } else {
            later();
        }
    }

    private void later() {
        synchronized (lock) {
            if (finished) {
                return;
            }
            long delay = backoffMs;
            backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
            try {
                retry = core.schedule(this::send, delay, TimeUnit.MILLISECONDS);
                return;
            } catch (RejectedExecutionException e) {
                // the session ended: below
            }
        }
        finish(Outcome.SESSION_ENDED);
    }

    private void finish(Outcome outcome) {
        synchronized (lock) {
            if (finished) {
                return;
            }
            finished = true;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
        }
        owner.releaseEnded(this, outcome);
    }

    @Override
    public String toString() {
        return "release of " + held.key();
    }
}

package io.disco.provider.etcd;

import io.disco.core.internal.SessionThread;
import io.disco.core.internal.grant.Acquisition;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.op.Op;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The service's side of a release (issue 44): the held grant is given up at once ({@link GrantLedger}) and its
 * {@link KeyRelease} sent; a synchronous caller waits for its confirmation at most the request timeout and
 * uninterruptibly, and is told when no answer came in time (the delete then goes on in the background, and the
 * next acquisition waits for it, then claims anew with a new token). How the release ended decides what follows:
 * confirmed, the listeners hear that the grant ended and an acquisition waiting for it goes on; the key found gone
 * before it, the service is lost ({@link GrantLoss}); refused by etcd with nothing applied, the grant is held again
 * and the caller sees the refusal.
 *
 * @param <G> the grant
 * @param <L> the service's loss
 */
final class GrantRelease<G, L extends DiscoException> implements KeyRelease.Owner<G> {

    private final ClaimOwner<G> service;
    private final GrantLedger<G, HeldGrant<G>, Acquisition<G>, KeyRelease<G>, L> ledger;
    private final GrantLoss<G, L> loss;
    private final GrantEvents events;
    /** What else a release of a grant deletes in its Txn (a semaphore's slot). */
    private final Function<G, Op[]> also;
    /** Makes the service's kind of loss from a message and a cause. */
    private final BiFunction<String, Throwable, L> lostException;

    GrantRelease(
            ClaimOwner<G> service,
            GrantLedger<G, HeldGrant<G>, Acquisition<G>, KeyRelease<G>, L> ledger,
            GrantLoss<G, L> loss,
            GrantEvents events,
            Function<G, Op[]> also,
            BiFunction<String, Throwable, L> lostException) {
        this.service = service;
        this.lostException = lostException;
        this.ledger = ledger;
        this.loss = loss;
        this.events = events;
        this.also = also;
    }

    /**
     * Starts the release of the held grant, or finds the unconfirmed one of this call's grant (an earlier call timed
     * out); null if nothing is held.
     *
     * @param ofThisCall whether a held grant is one this call releases (its mode)
     * @param mismatch what to throw when it is not: nothing is released
     * @param what the release in messages: "release", "resignation"
     * @throws DiscoException the loss, once, if the held grant was lost before this call
     */
    KeyRelease<G> releasing(Predicate<G> ofThisCall, Function<G, RuntimeException> mismatch, String what) {
        GrantLedger.ReleaseStep<KeyRelease<G>, HeldGrant<G>> step;
        try {
            step = ledger.release(held -> ofThisCall.test(held.grant()), held -> newRelease(held, what));
        } catch (DiscoException e) {
            if (ledger.loss().orElse(null) == e) {
                throw lostException.apply(
                        service.kind() + " " + service.name() + ": the grant was lost before it was released: "
                                + e.getMessage(),
                        e);
            }
            throw e;
        }
        if (step == null) {
            return null;
        }
        if (step.mismatch() != null) {
            throw mismatch.apply(step.mismatch().grant());
        }
        if (step.first()) {
            step.release().start();
        }
        return step.release();
    }

    /** Makes the release of {@code held} (under the ledger's monitor: only builds it). */
    KeyRelease<G> newRelease(HeldGrant<G> held, String what) {
        return new KeyRelease<>(
                service.session(),
                this,
                held,
                also.apply(held.grant()),
                what + " of " + service.kind() + " " + service.name());
    }

    /**
     * Waits for a release, at most the request timeout and uninterruptibly: an interrupted caller (every cancelled
     * task's {@code finally { unlock(); }}) completes its release all the same and keeps its interrupt status.
     * Failures become a {@link DiscoException} naming the release, its loss is thrown as it is, and no answer in
     * time says what is known.
     */
    void await(KeyRelease<G> r, String what) {
        SessionCore session = service.session();
        String op = what + " of " + service.kind() + " " + service.name();
        SessionThread.refuseOnSessionThread("the " + op);
        long deadline = System.nanoTime() + session.requestTimeout().toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    session.await(r.confirmed, Math.max(0, deadline - System.nanoTime()));
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // wait on: a release is not given up half-way
                } catch (TimeoutException e) {
                    r.giveUp(); // before any other claim of this session can start (it waits for this thread)
                    throw new DiscoException(
                            "etcd could not be reached: no answer to the " + op + " within "
                                    + session.requestTimeout().toMillis()
                                    + " ms. The grant is given up: this owner no longer holds it and its token must"
                                    + " not be used; the delete of its key is sent again until etcd answers or the"
                                    + " lease ends, and this owner is granted nothing before it is confirmed (the"
                                    + " next acquisition waits for it, then claims anew with a new token)",
                            e);
                } catch (ExecutionException e) {
                    Throwable cause = EtcdErrors.unwrap(e.getCause());
                    ledger.reported(cause);
                    if (cause instanceof DiscoException d) {
                        throw d;
                    }
                    throw EtcdErrors.failure(op, cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The key of the unconfirmed release {@code r} was seen gone (its watch): the grant has ended. */
    void seenGone(KeyRelease<G> r) {
        r.seenGone();
        ended(r);
    }

    /** The grant {@code r} released has ended, whoever learned it first: the listeners hear it once. */
    private void ended(KeyRelease<G> r) {
        if (r.firstEnd()) {
            events.ended(r.held().sinceNanos(), null);
        }
        r.held().stopWatching();
    }

    /**
     * The release {@code r} ends with its lease: revoked by a close, or the session's end; its key went with it.
     */
    void endedWithLease(KeyRelease<G> r) {
        r.stop();
        ledger.over(r);
        ended(r);
        service.session().deliver(() -> r.confirmed.complete(null));
    }

    @Override
    public boolean releaseRefused(KeyRelease<G> r) {
        return ledger.holdAgain(r);
    }

    @Override
    public void releaseEnded(KeyRelease<G> r, KeyRelease.Outcome outcome, DiscoException cause) {
        SessionCore session = service.session();
        switch (outcome) {
            case DELETED -> {
                ledger.confirmed(r);
                ended(r);
            }
            case GONE_BEFORE -> {
                L lost = lostException.apply(
                        service.kind() + " " + service.name() + " was lost before this release: its key "
                                + r.held().keyText() + " (created at revision "
                                + r.held().createRevision()
                                + ") was already gone (its lease expired or was revoked, or somebody deleted it)",
                        null);
                if (loss.lose(lost)) {
                    session.probeLease();
                    return;
                }
            }
            case SESSION_ENDED -> {
                DiscoException sessionLoss = session.lossCause();
                if (sessionLoss != null) {
                    L lost = lostException.apply(
                            service.kind() + " " + service.name() + " lost: " + sessionLoss.getMessage(), sessionLoss);
                    if (loss.lose(lost)) {
                        return;
                    }
                }
                ended(r);
            }
            case REFUSED -> {
                session.deliver(() -> r.confirmed.completeExceptionally(cause)); // held again: the caller may retry
                return;
            }
        }
        ledger.over(r);
        if (outcome == KeyRelease.Outcome.DELETED) {
            session.deliver(() -> r.confirmed.complete(null));
            return;
        }
        // Lost by another path meanwhile (the session's loss), which took this release and completes it with that
        // loss, maybe after this line: its caller learns the loss, whoever completes first. Closed meanwhile
        // instead: nothing is lost any more, the release is over all the same.
        Optional<L> lostMeanwhile = ledger.loss();
        session.deliver(() ->
                lostMeanwhile.ifPresentOrElse(r.confirmed::completeExceptionally, () -> r.confirmed.complete(null)));
    }
}

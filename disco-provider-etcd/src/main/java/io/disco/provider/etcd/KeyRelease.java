package io.disco.provider.etcd;

import io.disco.core.internal.grant.Release;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The release of one held grant, as it is sent to etcd (issue 44): from its start the grant is given up (the
 * service holds nothing and hands nothing out from it), and the delete of its key, guarded by the key's
 * CreateRevision, with what goes with it in the same Txn (a semaphore's slot), is sent until etcd answers: again on
 * another member while unanswered, since a guarded delete is safe to repeat, for as long as the session lives. The
 * release is <em>confirmed</em> by etcd's answer (the key deleted by it, or found gone before it: then the grant
 * had been lost), or by the session's end. While the delete's outcome is unknown, no claim of the session may
 * create the key ({@link #guard}): it would adopt the incarnation being released, with its token. How the release
 * ended is reported to its {@link Owner} (the service's side of the release, {@link GrantRelease}).
 *
 * @param <G> the grant
 */
final class KeyRelease<G> implements Release<HeldGrant<G>> {

    /** How a release ended. */
    enum Outcome {
        /** The key was deleted by this release (one of its copies). */
        DELETED,
        /** The key was gone before the release reached etcd: the grant had been lost. */
        GONE_BEFORE,
        /** The session ended before etcd answered: the key went with its lease (revoked or expired). */
        SESSION_ENDED,
        /** etcd refused the delete for good (a permission taken away) and deleted nothing: the grant is held again. */
        REFUSED
    }

    /** Who hears how the release ended: the service's side of it. */
    interface Owner<G> {

        /**
         * etcd refused the delete for good: if nothing of it can have been applied and no caller was told that the
         * grant is given up, the grant is held again.
         *
         * @return whether it is held again; false: the release goes on
         */
        boolean releaseRefused(KeyRelease<G> release);

        /** The release ended with {@code outcome}; {@code cause} is etcd's refusal, else null. */
        void releaseEnded(KeyRelease<G> release, Outcome outcome, DiscoException cause);
    }

    private final SessionCore session;
    private final Owner<G> owner;
    private final HeldGrant<G> held;
    private final Op[] also;
    /** The request in messages: "release of lock /locks/a". */
    private final String what;

    /**
     * Completes when the release is confirmed; exceptionally with the service's loss when the grant turns out to
     * have been lost, or with etcd's refusal when the grant is held again.
     */
    final CompletableFuture<Void> confirmed = new CompletableFuture<>();
    /** Completes when etcd answered the delete, or the session ended: until then the key's creation waits. */
    private final CompletableFuture<Void> deleted = new CompletableFuture<>();

    private final AtomicInteger copies = new AtomicInteger();
    private final AtomicBoolean finished = new AtomicBoolean();
    private final AtomicBoolean endTold = new AtomicBoolean();
    /** A copy failed without an answer: it may have been applied. */
    private volatile boolean unknownOutcome;
    /** The key's watch saw it go while this release was unconfirmed. */
    private volatile boolean seenGone;
    /** A caller was told that the release is unconfirmed. */
    private volatile boolean givenUp;

    KeyRelease(SessionCore session, Owner<G> owner, HeldGrant<G> held, Op[] also, String what) {
        this.session = session;
        this.owner = owner;
        this.held = held;
        this.also = also;
        this.what = what;
    }

    @Override
    public HeldGrant<G> held() {
        return held;
    }

    @Override
    public boolean givenUp() {
        return givenUp;
    }

    @Override
    public boolean maybeApplied() {
        return unknownOutcome || seenGone || copies.get() > 1;
    }

    /** Sends the delete; returns at once. */
    void start() {
        Supplier<CompletableFuture<TxnResponse>> delete = () -> {
            copies.incrementAndGet();
            return GuardedDelete.send(session.client(), held.key(), held.createRevision(), also);
        };
        session.rpc(what, delete).whenComplete((r, e) -> {
            if (e == null) {
                answered(r);
                deleted.complete(null);
            } else if (!EtcdErrors.isTransient(e)) {
                refused(EtcdErrors.failure(what, EtcdErrors.unwrap(e)));
            } else {
                // The outcome is unknown: a copy may be applied at any moment. Sent again until etcd answers.
                unknownOutcome = true;
                guard();
                session.untilAnswered(what, delete).whenComplete((later, le) -> {
                    if (later != null) {
                        answered(later);
                    } else {
                        finish(Outcome.SESSION_ENDED, null);
                    }
                    deleted.complete(null);
                });
            }
        });
    }

    /**
     * etcd's answer: deleted, or found gone. With more than one copy sent, "already gone" may mean that an earlier
     * copy deleted it; while the lease is valid, only a delete by somebody else at this very instant would be
     * misjudged, and it ended a grant that was being released anyway.
     */
    private void answered(TxnResponse r) {
        boolean ours = r.isSucceeded() || (copies.get() > 1 && !session.isLost());
        finish(ours ? Outcome.DELETED : Outcome.GONE_BEFORE, null);
    }

    /**
     * etcd refused the delete for good: the grant is held again if nothing can have been applied and nobody was
     * told it is given up; if its key was seen gone all the same, the release is over; otherwise it is sent again
     * after a request timeout, until etcd answers or the session ends.
     */
    private void refused(DiscoException failure) {
        if (seenGone) {
            deleted.complete(null);
            finish(Outcome.DELETED, null);
        } else if (owner.releaseRefused(this)) {
            deleted.complete(null);
            finish(Outcome.REFUSED, failure);
        } else {
            guard();
            try {
                session.schedule(this::start, session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                deleted.complete(null); // the session ended: the key went with its lease
                finish(Outcome.SESSION_ENDED, null);
            }
        }
    }

    /** The key's watch saw it go: the release's delete, or somebody's; the answer decides which. */
    void seenGone() {
        seenGone = true;
    }

    /** A caller was told that the release is unconfirmed: the grant can no longer be held again. */
    void giveUp() {
        givenUp = true;
        guard();
    }

    /**
     * Until etcd answers the delete, no claim of this session may create (and so adopt) the key, whatever service
     * makes it (a name's next service, after this one closed).
     */
    private void guard() {
        if (!deleted.isDone()) {
            session.runOnSession(() -> session.lateCreates().awaitDelete(held.key(), deleted));
        }
    }

    /** Stops reporting: the service ended the release (its loss, its close with the lease). */
    void stop() {
        finished.set(true);
    }

    /** @return true the first time only: whoever gets it tells the listeners that the grant ended */
    boolean firstEnd() {
        return endTold.compareAndSet(false, true);
    }

    private void finish(Outcome outcome, DiscoException cause) {
        if (finished.compareAndSet(false, true)) {
            owner.releaseEnded(this, outcome, cause);
        }
    }

    @Override
    public String toString() {
        return what + " (key " + held.keyText() + " created at revision " + held.createRevision() + ")";
    }
}

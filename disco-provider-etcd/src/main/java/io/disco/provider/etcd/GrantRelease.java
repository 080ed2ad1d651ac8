package io.disco.provider.etcd;

import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The release of a service's held grant, the layer of every service ({@link EtcdService}) above its
 * {@link GrantLedger}: a guarded delete of the grant's key (with what else the grant owns,
 * {@link #releaseOps}), sent again on another member while unanswered. Its duties are the rule of issue
 * 44: when no answer comes within the request timeout, the grant is given up at once and never handed out
 * again, the delete goes on in the background ({@link PendingRelease}), and no claim of the session may
 * create the key before it is answered; an answer that finds the key gone reports the loss; a delete etcd
 * refuses for good holds the grant again. A release waits uninterruptibly, at most the request timeout.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class GrantRelease<G, L extends DiscoException> extends GrantLedger<G, L> {

    GrantRelease(SessionCore session, String prefix, String kind) {
        super(session, prefix, kind);
    }

    /** What else a release of {@code held} deletes, in the Txn that deletes its key (guarded on it); none by default. */
    Op[] releaseOps(G held) {
        return NO_OPS;
    }

    static final Op[] NO_OPS = new Op[0];

    /** {@code internal} as a future for the user: completed on the callback executor. */
    final <T> CompletableFuture<T> toUser(CompletableFuture<T> internal) {
        UserFuture<T> view = new UserFuture<>(session.callbackExecutor(), internal);
        internal.whenComplete((v, e) -> session.deliver(() -> view.answer(v, e)));
        return view;
    }

    /**
     * Releases the held grant, if any: deletes its key guarded by its CreateRevision (sent again on
     * another member while unanswered: a guarded delete is safe to repeat). {@code check} sees the
     * held grant first and may refuse (throw). Not interruptible: an interrupted caller waits all the
     * same, at most the request timeout, and keeps its interrupt status.
     *
     * <p>The outcomes: etcd deletes the key (returns); etcd refuses the delete for good, a permission
     * taken away (the failure is thrown, the grant is still held and the call can be retried); the key
     * was already gone, deleted by somebody else or with the lease, or the service lost the grant
     * before this call (the loss is thrown: a resumed zombie learns here that it had lost); or no answer
     * within the request timeout. Then the outcome is unknown and the grant is given up at once
     * ({@link #held()} is empty, its token must not be used): the delete is sent again in the background
     * until etcd answers or the session ends, a {@link DiscoException} says so, and no grant is handed out
     * until the release is confirmed (an acquisition of the {@link EtcdService} begins after it). Calling this
     * again waits for that same release. A release whose copies (sent to several members) include one that may have deleted the key
     * returns normally when a later copy finds it gone, while the lease is valid.
     */
    final void release(String call, Consumer<G> check, String what) {
        SessionThread.refuseOnSessionThread(call);
        awaitRelease(releasing(check, what), what);
    }

    /** {@link #release} without blocking: the loss, or a refusal by {@code check}, fails the future; completes on the callback executor. */
    final CompletableFuture<Void> releaseAsync(Consumer<G> check, String what) {
        try {
            return toUser(releasing(check, what).confirmed().thenApply(v -> v));
        } catch (RuntimeException e) {
            return toUser(CompletableFuture.failedFuture(e));
        }
    }

    /**
     * Starts a release (see {@link #release}), or finds the unconfirmed one of this grant: throws at once
     * what {@code check} or an earlier loss throws; the future completes when the release is confirmed.
     */
    private PendingRelease releasing(Consumer<G> check, String what) {
        G g;
        ByteSequence key;
        long rev;
        long heldSince;
        PendingRelease pending;
        synchronized (lock) {
            if (unreleasedLoss != null) {
                throw lostException(
                        kind + " " + prefix + ": the grant was lost before it was released: "
                                + unreleasedLoss.getMessage(),
                        unreleasedLoss);
            }
            if (release != null) {
                return release; // an earlier release of this grant was sent and is not confirmed yet
            }
            g = held == null ? null : held.grant();
            check.accept(g);
            if (g == null) {
                return PendingRelease.NONE;
            }
            key = held.key();
            rev = held.createRevision();
            heldSince = held.sinceNanos();
            move(GrantState.RELEASING);
            release = pending = new PendingRelease(held.key(), new CompletableFuture<>(), new CompletableFuture<>());
        }
        Op[] also = releaseOps(g);
        AtomicInteger copies = new AtomicInteger();
        Supplier<CompletableFuture<TxnResponse>> delete = () -> {
            copies.incrementAndGet();
            return GuardedDelete.send(session.client(), key, rev, also);
        };
        session.rpc(what, delete).whenComplete((r, e) -> {
            if (e == null) {
                answered(pending, r, key, rev, heldSince, copies.get());
                pending.deleted().complete(null);
            } else if (!EtcdErrors.isTransient(e)) {
                pending.deleted().complete(null);
                refused(pending, rev, EtcdErrors.failure(what + " of " + kind + " " + prefix, EtcdErrors.unwrap(e)));
            } else {
                // The outcome is unknown: a copy may be applied at any moment. Sent again until etcd answers.
                pending.guard(session);
                session.untilAnswered(what, delete).whenComplete((later, le) -> {
                    if (later != null) {
                        answered(pending, later, key, rev, heldSince, copies.get());
                    } // else the session ended: sessionLost or sessionClosed confirmed the release
                    pending.deleted().complete(null);
                });
            }
        });
        return pending;
    }

    /**
     * The answer to the release of the grant created at {@code rev}: deleted, or found gone. It confirms the
     * release (the own key's watch may have ended the grant already, but only the answer tells whether the
     * delete was ours), unless the session's end or a close did first.
     */
    private void answered(
            PendingRelease pending, TxnResponse r, ByteSequence key, long rev, long heldSince, int copies) {
        // With more than one copy sent, "already gone" may mean that an earlier copy deleted it; while
        // the lease is valid, only a delete by somebody else at this very instant would be misjudged,
        // and it ended a grant that was being released anyway.
        boolean ours = r.isSucceeded() || (copies > 1 && !session.isLost());
        L loss = null;
        boolean endedNow = false;
        synchronized (lock) {
            if (release != pending) {
                return; // confirmed already: the session ended, or the service was closed
            }
            if (state == GrantState.RELEASING && held.createRevision() == rev) {
                move(GrantState.IDLE);
                dropHeld();
                endedNow = true;
            }
            if (!ours) {
                loss = lostException(
                        kind + " " + prefix + " was lost before this release: its key "
                                + key.toString(StandardCharsets.UTF_8) + " (created at revision " + rev
                                + ") was already gone (its lease expired or was revoked, or somebody deleted it)",
                        null);
                if (lost == null && state == GrantState.IDLE) {
                    lost = loss;
                    move(GrantState.LOST);
                }
            }
            releaseConfirmed(loss);
        }
        if (endedNow || loss != null) {
            tellEnded(heldSince, loss);
        }
        if (loss != null) {
            session.probeLease();
            finish();
        }
    }

    /**
     * etcd refused the delete for good (a permission taken away): nothing was deleted, the grant is held again
     * and the failure is thrown to the releaser. If the key went meanwhile all the same (seen by its watch), the
     * release is confirmed with the failure.
     */
    private void refused(PendingRelease pending, long rev, DiscoException failure) {
        CompletableFuture<Void> waiters;
        synchronized (lock) {
            if (release != pending) {
                return;
            }
            if (state == GrantState.RELEASING && held.createRevision() == rev) {
                move(GrantState.HELD);
            }
            waiters = release.confirmed();
            release = null;
        }
        waiters.completeExceptionally(failure);
    }

    /**
     * Waits for a release, at most the request timeout and uninterruptibly: an interrupted caller
     * (every cancelled task's {@code finally { unlock(); }}) completes its release all the same and
     * keeps its interrupt status. Failures become a {@link DiscoException} naming the release, its loss
     * is thrown as it is, and no answer in time says what is known.
     */
    private void awaitRelease(PendingRelease releasing, String what) {
        CompletableFuture<Void> request = releasing.confirmed();
        String op = what + " of " + kind + " " + prefix;
        long deadline = System.nanoTime() + session.requestTimeout().toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    session.await(request, Math.max(0, deadline - System.nanoTime()));
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // wait on: a release is not given up half-way
                } catch (TimeoutException e) {
                    releasing.guard(
                            session); // before any other claim of this session can start (it waits for this thread)
                    throw new DiscoException(
                            "etcd could not be reached: no answer to the " + op + " within "
                                    + session.requestTimeout().toMillis()
                                    + " ms. The grant is given up: this owner no longer holds"
                                    + " it and its token must not be used; the delete of its key is sent again until etcd answers or"
                                    + " the lease ends, and this owner is granted nothing before it is confirmed (the next acquisition"
                                    + " waits for it, then claims anew with a new token)",
                            e);
                } catch (ExecutionException e) {
                    Throwable cause = EtcdErrors.unwrap(e.getCause());
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
}

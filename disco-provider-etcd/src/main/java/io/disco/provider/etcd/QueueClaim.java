package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Txn;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One attempt to own a key in a queue of keys ordered by CreateRevision: the acquire step shared by
 * the lock, the read/write lock and the election.
 *
 * <ol>
 *   <li>{@link #create()} writes the own key (leased) in one Txn, which may also tell at once that
 *       nobody is ahead.</li>
 *   <li>Otherwise wait ({@link PredecessorWait}) until no key created before the own key is left in
 *       {@link #waitRange()}; then re-read the own key linearizably: if it is gone, the lease was
 *       lost and the attempt fails, it never reports success.</li>
 *   <li>{@link #grant} turns the acquisition into the caller's grant, and {@link #commit} records it
 *       in the service under the service's monitor.</li>
 * </ol>
 *
 * Every way of giving up (timeout, interruption, cancellation of {@link #result}, failure, loss)
 * deletes the own key, guarded by {@code CreateRevision == myRev} (unguarded only when the create
 * Txn's outcome is unknown: the key name is unique to this lease and prefix), retrying in the
 * background until it succeeds or the session ends.
 *
 * <p>The state machine runs on the session thread; {@link #result} may be completed, cancelled or
 * awaited from any thread.
 *
 * @param <G> the grant type; a {@code null} grant means "not acquired" (try-only attempts)
 */
abstract class QueueClaim<G> {

    /** What the create Txn found. */
    record Created(long myRevision, boolean mustWait, long revision) {
    }

    final EtcdSession session;
    final ByteSequence ownKey;
    private final boolean tryOnly;
    private final Object monitor;
    final Result result = new Result();
    private final CompletableFuture<Void> settled = new CompletableFuture<>();

    // Session thread only.
    private long myRevision;
    private boolean createInFlight;
    private boolean createOutcomeUnknown;
    private boolean finished;
    private PredecessorWait wait;
    // Read by the awaiting thread.
    private volatile boolean answered;
    // Guarded by monitor.
    private boolean committed;

    QueueClaim(EtcdSession session, ByteSequence ownKey, boolean tryOnly, Object monitor) {
        this.session = session;
        this.ownKey = ownKey;
        this.tryOnly = tryOnly;
        this.monitor = monitor;
        result.whenComplete((g, e) -> {
            if (e != null) {
                session.runOnSession(() -> giveUp(e));
            }
        });
    }

    /** Runs the create Txn; the returned future completes on the session thread. */
    abstract CompletableFuture<Created> create();

    /** Where this owner's predecessors live. */
    abstract KeyRange waitRange();

    /** Builds the grant of an acquisition whose own key has CreateRevision {@code myRevision}, acquired at {@code revision}. */
    abstract CompletableFuture<G> grant(long myRevision, long revision);

    /** Records the grant in the service; called under the monitor. */
    abstract void commit(G grant, long myRevision);

    /** Called (on the session thread) once the attempt ended without a commit. */
    abstract void ended();

    /** Maps "the own key is gone" to the service's lost exception. */
    abstract DiscoException lost(DiscoException cause);

    final QueueClaim<G> start() {
        session.runOnSession(this::doCreate);
        return this;
    }

    private void doCreate() {
        if (finished) {
            return;
        }
        createInFlight = true;
        create().whenComplete((c, e) -> {
            createInFlight = false;
            if (e != null) {
                createOutcomeUnknown = true;
                fail(e);
                return;
            }
            answered = true;
            myRevision = c.myRevision();
            if (finished) {
                cleanup();
            } else if (!c.mustWait()) {
                acquired(c.revision());
            } else if (tryOnly) {
                finishWith(null);
            } else {
                wait = new PredecessorWait(session, waitRange(), myRevision - 1, ownKey).start();
                wait.future.whenComplete((v, we) -> {
                    if (we instanceof PredecessorWait.OwnKeyDeletedException) {
                        myRevision = 0; // nothing of ours left to delete
                        fail(lost((DiscoException) we));
                        session.probeLease();
                    } else if (we != null) {
                        fail(we);
                    } else {
                        verify();
                    }
                });
            }
        });
    }

    /** Rule 2: after waiting, the own key must still be there, with the revision it was created at. */
    private void verify() {
        if (finished) {
            return;
        }
        session.rpc("re-read of the own key", () -> session.client().getKVClient().get(ownKey))
                .whenComplete((GetResponse r, Throwable e) -> {
                    if (e != null) {
                        fail(e);
                    } else if (r.getKvs().isEmpty() || r.getKvs().get(0).getCreateRevision() != myRevision) {
                        myRevision = 0; // nothing of ours left to delete
                        fail(lost(new PredecessorWait.OwnKeyDeletedException(ownKey)));
                        session.probeLease();
                    } else {
                        acquired(r.getHeader().getRevision());
                    }
                });
    }

    private void acquired(long revision) {
        if (finished) {
            return;
        }
        grant(myRevision, revision).whenComplete((g, e) -> {
            if (e != null) {
                fail(e);
            } else {
                finishWith(g);
            }
        });
    }

    private void finishWith(G grant) {
        if (finished) {
            cleanup();
            return;
        }
        if (grant == null) {
            // Not acquired (try-only): answer once the own key is withdrawn, so none is left behind.
            finished = true;
            cleanup();
            settled.whenComplete((v, e) -> result.internalComplete(null));
            ended();
            return;
        }
        synchronized (monitor) {
            if (result.isDone()) {
                // Given up concurrently (cancelled or completed by the caller): withdraw.
                giveUp(new CancellationException());
                return;
            }
            committed = true;
            commit(grant, myRevision);
        }
        finished = true;
        settled.complete(null);
        result.internalComplete(grant);
    }

    private void fail(Throwable e) {
        giveUp(e instanceof DiscoException ? e : EtcdSession.failure("acquire", e));
    }

    /** Gives up the attempt for {@code cause}; idempotent; session thread only. */
    final void giveUp(Throwable cause) {
        if (finished) {
            return;
        }
        finished = true;
        if (wait != null) {
            wait.cancel();
        }
        result.internalFail(cause);
        if (!createInFlight) {
            cleanup();
        }
        ended();
    }

    /** Like {@link #giveUp} but callable from any thread. */
    final void abandon(Throwable cause) {
        session.runOnSession(() -> giveUp(cause));
    }

    private void cleanup() {
        if (myRevision == 0 && !createOutcomeUnknown) {
            settled.complete(null);
            return;
        }
        long rev = myRevision;
        myRevision = 0;
        deleteOwnKey(session, ownKey, createOutcomeUnknown ? 0 : rev).whenComplete((v, e) -> settled.complete(null));
    }

    /**
     * Deletes {@code key} if it still has CreateRevision {@code createRevision} (any revision when 0),
     * retrying in the background until etcd answers or the session ends. The returned future
     * completes after the first attempt.
     */
    static CompletableFuture<Void> deleteOwnKey(EtcdSession session, ByteSequence key, long createRevision) {
        CompletableFuture<Void> firstAttempt = new CompletableFuture<>();
        deleteAttempt(session, key, createRevision, firstAttempt, 100);
        return firstAttempt;
    }

    private static void deleteAttempt(EtcdSession session, ByteSequence key, long createRevision,
                                      CompletableFuture<Void> firstAttempt, long backoffMs) {
        if (session.finishedCause() != null) {
            firstAttempt.complete(null); // the lease is gone or revoked: its keys go with it
            return;
        }
        session.rpc("delete of the own key", () -> guardedDelete(session, key, createRevision))
                .whenComplete((r, e) -> {
                    firstAttempt.complete(null);
                    if (e != null) {
                        session.schedule(() -> deleteAttempt(session, key, createRevision, firstAttempt,
                                Math.min(2000, backoffMs * 2)), backoffMs, TimeUnit.MILLISECONDS);
                    }
                });
    }

    static CompletableFuture<TxnResponse> guardedDelete(EtcdSession session, ByteSequence key, long createRevision) {
        Txn txn = session.client().getKVClient().txn();
        if (createRevision != 0) {
            txn = txn.If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)));
        }
        return txn.Then(Op.delete(key, DeleteOption.DEFAULT)).commit();
    }

    /**
     * Completes once the attempt has nothing left to withdraw: it committed, or its own key's delete
     * was answered (a failed delete keeps retrying in the background). A service that starts a new
     * attempt on the same key should wait for this, or the old attempt's guarded delete may remove the
     * key the new attempt just adopted (same key, same CreateRevision).
     */
    final CompletableFuture<Void> settled() {
        return settled.minimalCompletionStage().toCompletableFuture();
    }

    /**
     * Waits for the attempt like a blocking acquire: forever, or at most {@code timeout}. On timeout
     * or interruption the claim is withdrawn and, when etcd was answering, this waits (bounded by the
     * request timeout) until the own key is deleted, so the caller sees no key left behind.
     */
    final G await(Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return timeout == null ? result.get() : result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            if (!result.cancel(true)) {
                Thread.currentThread().interrupt();
                return result.join();
            }
            awaitSettled();
            throw e;
        } catch (TimeoutException e) {
            if (!result.cancel(true)) {
                return result.join();
            }
            awaitSettled();
            if (!answered) {
                throw new DiscoException("etcd could not be reached: no answer within " + timeout.toMillis() + " ms", e);
            }
            throw e;
        } catch (ExecutionException e) {
            throw unchecked(e.getCause());
        } catch (CancellationException e) {
            throw new IllegalStateException("the acquisition was withdrawn (service closed)", e);
        }
    }

    /** Waits for an attempt that cannot wait on others (try-only); bounded by the request timeouts. */
    final G join() {
        try {
            return result.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw unchecked(e.getCause());
        }
    }

    private void awaitSettled() {
        if (!answered) {
            return;
        }
        try {
            settled.get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
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

    /**
     * The caller's view of the attempt. Once committed it can no longer be cancelled or completed by
     * the caller; before that, cancelling or completing it exceptionally withdraws the claim.
     */
    final class Result extends CompletableFuture<G> {

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            synchronized (monitor) {
                if (committed) {
                    return false;
                }
            }
            return super.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            synchronized (monitor) {
                if (committed) {
                    return false;
                }
            }
            return super.completeExceptionally(ex);
        }

        @Override
        public boolean complete(G value) {
            throw new UnsupportedOperationException("an acquisition completes only by acquiring");
        }

        void internalComplete(G value) {
            super.complete(value);
        }

        void internalFail(Throwable ex) {
            super.completeExceptionally(ex);
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }
}

package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.ByteSequence;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * Where one service's grant stands, the lowest layer of every service ({@link EtcdService}): the
 * {@link GrantState} (every move checked), the {@link HeldGrant}, the latest acquisition, the release
 * whose outcome is not known yet ({@link PendingRelease}), and the loss. Its duties: commit a grant that a
 * {@link QueueClaim} won (as its {@link ClaimOwner}), end it when its key is deleted (by its release, or by
 * somebody else: a loss), answer what is held, replace or end a held term, tell the listeners that a grant
 * was acquired or ended, answer whether a late create's key incarnation is owned
 * ({@link SessionMember#lateIncarnation}), and complete {@link #done()}. The release is the layer above it,
 * {@link GrantRelease}; the acquisition and the lifetime the service's own.
 *
 * <p>State is guarded by {@link #lock}, a private object (never the service itself, which users can see
 * and synchronise on); {@link QueueClaim} commits under it too. It is held only for short state changes,
 * never while waiting for etcd or calling out.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class GrantLedger<G, L extends DiscoException> extends ClaimOwner<G> {

    final SessionCore session;
    final String prefix;
    /** What the service is called in messages: "lock", "read/write lock", "election". */
    final String kind;

    private final CompletableFuture<Void> done = new CompletableFuture<>();
    final Object lock = new Object();

    /** One watch per own key (a read/write lock has two), kept across acquisitions; session thread only. */
    private final Map<ByteSequence, OwnKeyWatch> ownKeyWatches = new HashMap<>();

    // Guarded by lock.
    GrantState state = GrantState.IDLE;
    /** The held grant while {@link GrantState#holding() holding}, else null. */
    HeldGrant<G> held;

    /** The latest acquisition of the service (the one in progress, or the last one). */
    QueueClaim<G> latest;
    /**
     * The release whose outcome is not known yet, or null: from {@link GrantState#RELEASING} until its delete
     * is answered (the state may be {@code IDLE} meanwhile, once the own key's watch saw the key go), the
     * session ends or the service closes. Its {@code confirmed} fails with the loss when the key turned out to
     * be gone before the delete; an acquisition waits for it before it claims anew.
     */
    PendingRelease release;
    /** Why the service is unusable: its loss, or null. Set in state LOST, or CLOSED when the loss came after closing. */
    L lost;
    /**
     * The loss that ended a held grant before it was released, or null: the next release reports it
     * (a resumed zombie learns there that it had lost), even after the service was closed.
     */
    L unreleasedLoss;

    GrantLedger(SessionCore session, String prefix, String kind) {
        this.session = session;
        this.prefix = prefix;
        this.kind = kind;
    }

    @Override
    final SessionCore session() {
        return session;
    }

    @Override
    public final String prefix() {
        return prefix;
    }

    @Override
    public final String kind() {
        return kind;
    }

    /** The service's lease-lost exception. */
    @Override
    abstract L lostException(String message, Throwable cause);

    /** Moves to {@code next}; a move the service never makes fails loudly (see {@link GrantState#to}). */
    final void move(GrantState next) {
        assert Thread.holdsLock(lock);
        state = state.to(next);
    }

    /** Ends the held grant: stops watching its key. */
    final void dropHeld() {
        assert Thread.holdsLock(lock);
        if (held != null && held.watch() != null) {
            held.watch().stop();
        }
        held = null;
    }

    // ---------------------------------------------------------------- committing and losing

    @Override
    final Throwable commit(
            G grant,
            ByteSequence ownKey,
            long createRevision,
            OwnKeyWatch.Following watch,
            long startedNanos,
            Predicate<G> handOver) {
        long since;
        synchronized (lock) {
            if (lost != null) {
                return lost;
            }
            if (state == GrantState.CLOSED) {
                return new IllegalStateException(kind + " service " + prefix + " closed");
            }
            if (!handOver.test(grant)) {
                return new CancellationException("the caller gave up");
            }
            move(GrantState.HELD);
            held = new HeldGrant<>(grant, ownKey, createRevision, watch, System.nanoTime());
            since = held.sinceNanos();
        }
        if (session.listened()) {
            Duration waited = Duration.ofNanos(since - startedNanos);
            String key = ownKey.toString(java.nio.charset.StandardCharsets.UTF_8);
            FencingToken token = grant instanceof Fenced f ? f.token() : null;
            session.tell(l -> l.acquired(session.front(), kind, prefix, key, token, waited));
        }
        return null;
    }

    /** Tells the listeners that the held grant ended; {@code loss} is null for a release. */
    final void tellEnded(long heldSince, Throwable loss) {
        if (!session.listened()) {
            return;
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - heldSince);
        if (loss == null) {
            session.tell(l -> l.released(session.front(), kind, prefix, heldFor));
        } else {
            session.tell(l -> l.grantLost(session.front(), kind, prefix, loss, heldFor));
        }
    }

    /**
     * Session thread: the held key incarnation created at {@code createRevision} was deleted. When a
     * release of it was sent (even one whose answer was lost, which failed for the caller and kept the
     * grant), that is the release's delete: the grant ends as released. Otherwise it was not deleted by
     * this service (somebody's {@code etcdctl del}, a revoke of the lease by another process). That ends
     * the grant for good: it is a loss of this service, reported like a lease loss ({@link #done()},
     * {@link #err()}, and the next release throws it). The lease may be gone too: it is checked at once.
     */
    @Override
    final void heldKeyDeleted(long createRevision) {
        L loss;
        synchronized (lock) {
            if (!state.holding() || held.createRevision() != createRevision || lost != null) {
                return; // nothing held, or another term
            }
            if (state == GrantState.RELEASING) {
                // The delete of a release of this grant, whose answer was lost or is still to come: the grant
                // has ended (held() follows the own key). The release is confirmed by its answer, which says
                // whether the delete was ours (sent again until etcd answers); until then nothing is granted.
                move(GrantState.IDLE);
                tellEnded(held.sinceNanos(), null);
                dropHeld();
                return;
            }
            if (session.isLost()) {
                return; // the lease is gone, and its keys with it: the session's loss tells this service
            }
            // The grant's own token: a key's create revision is the token of a lock or a writer only (a reader's
            // is its phase's, a permit's its slot's). Deleted by somebody else, or with the lease (expired or
            // revoked on the server before this process knew): the session asks which before it logs.
            String token = held.tokenText();
            loss = lostException(
                    kind + " " + prefix + " lost: its key "
                            + held.key().toString(java.nio.charset.StandardCharsets.UTF_8) + token
                            + " was deleted while held",
                    null);
            move(GrantState.LOST);
            lost = loss;
            unreleasedLoss = loss;
            tellEnded(held.sinceNanos(), loss);
            dropHeld();
        }
        session.warnHeldKeyDeleted(loss.getMessage());
        session.probeLease();
        finish();
    }

    @Override
    final OwnKeyWatch ownKeyWatch(ByteSequence ownKey) {
        return ownKeyWatches.computeIfAbsent(ownKey, k -> new OwnKeyWatch(session, k));
    }

    final void checkUsable() {
        synchronized (lock) {
            if (lost != null) {
                throw lostException(kind + " " + prefix + " is unusable: " + lost.getMessage(), lost);
            }
            checkOpen();
        }
    }

    final void checkOpen() {
        synchronized (lock) {
            if (state == GrantState.CLOSED) {
                throw new IllegalStateException(kind + " service " + prefix + " is closed");
            }
        }
    }

    // ---------------------------------------------------------------- the held grant

    /** @return the held grant, or empty (also while its release is unconfirmed: the grant is given up) */
    public final Optional<G> held() {
        synchronized (lock) {
            return Optional.ofNullable(held == null || state == GrantState.RELEASING ? null : held.grant());
        }
    }

    /** The CreateRevision of the held grant's key, or 0 when nothing is held. */
    final long heldCreateRevision() {
        synchronized (lock) {
            return held == null ? 0 : held.createRevision();
        }
    }

    /**
     * Replaces the held grant if it still belongs to the term (the key incarnation) whose key has
     * CreateRevision {@code createRevision}; a null {@code replacement} ends it. A term is identified
     * by its key's CreateRevision, never by the grant object, which a proclamation replaces.
     */
    final void replaceHeld(long createRevision, G replacement) {
        synchronized (lock) {
            if (held != null && held.createRevision() == createRevision) {
                if (replacement == null) {
                    move(GrantState.IDLE);
                    dropHeld();
                } else {
                    held = held.withGrant(replacement);
                }
            }
        }
    }

    /** Under the lock: the pending release is confirmed (answered, or the session or the service ended); {@code loss} fails its waiters. */
    final void releaseConfirmed(L loss) {
        assert Thread.holdsLock(lock);
        CompletableFuture<Void> pending = release == null ? null : release.confirmed();
        release = null;
        if (pending != null) {
            session.deliver(() -> {
                if (loss == null) {
                    pending.complete(null);
                } else {
                    pending.completeExceptionally(loss);
                }
            });
        }
    }

    /** Session thread. See {@link SessionMember#lateIncarnation}. */
    public final CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision) {
        QueueClaim<G> claim;
        synchronized (lock) {
            if (held != null && held.key().equals(key) && held.createRevision() == createRevision) {
                return CompletableFuture.completedFuture(null);
            }
            claim = latest;
        }
        return claim != null && claim.ownKey.equals(key) ? claim.ownership(createRevision) : null;
    }

    // ---------------------------------------------------------------- lifetime

    public final CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public final Optional<L> err() {
        synchronized (lock) {
            return Optional.ofNullable(lost);
        }
    }

    final void finish() {
        session.runOnSession(() -> ownKeyWatches.values().forEach(OwnKeyWatch::close));
        session.deliver(() -> done.complete(null));
    }
}

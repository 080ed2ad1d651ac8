package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.Release;
import io.disco.fencing.Fenced;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * The release of a queue service's grant (issue 44), as it is sent to ZooKeeper: from its start the grant is
 * given up (the service holds nothing and hands nothing out from it), and the delete of its node, with what goes
 * with it in one transaction (a semaphore's slot), is sent until its outcome is known. That outcome is
 * <em>confirmed</em> when the delete is answered, when the node is seen gone after a copy that may have been
 * applied, or when the session ends; only then does the service claim anew, with a new node and so a newer token.
 *
 * <p>Each copy is sent on the session's ZooKeeper handle directly, not through Curator's retry loop, so that every
 * copy gets exactly one answer and this class knows which copies may have been applied: one answered with a
 * connection loss may have been. A "no node" for the own node is then the release's success (an earlier copy
 * deleted it); for the first copy, with none before it, the node was gone before the release: the grant had been
 * lost. A transaction is atomic, so repeating it never frees a slot that another holder claimed meanwhile: with
 * the own node gone, nothing of it applies. Copies are sent one at a time, the next one after a back-off of 0.1 s
 * doubling to 2 s once the previous one was answered with a connection loss, or at once when an acquisition
 * nudges it; until the session ends. How it ended is reported to its {@link Owner} (the service's side of the
 * release, {@link GrantRelease}).
 *
 * @param <G> the grant
 */
final class QueueRelease<G extends Fenced> implements Release<HeldGrant<G>> {

    /** How a release ended. */
    enum Outcome {
        /** The node was deleted by this release (one of its copies). */
        DELETED,
        /** The node was gone before the first copy reached ZooKeeper: the grant had been lost. */
        GONE_BEFORE,
        /** The session ended (expired, or the client is closed or on another session): the node went with it. */
        SESSION_ENDED,
        /** ZooKeeper refused the delete for good and nothing of it was applied: the grant is held again. */
        REFUSED
    }

    /** Who hears how the release ended: the service's side of it. */
    interface Owner<G extends Fenced> {

        /**
         * ZooKeeper refused the delete for good: if nothing of it can have been applied and no caller was told
         * that the grant is given up, the grant is held again.
         *
         * @return whether it is held again; false: the release goes on
         */
        boolean releaseRefused(QueueRelease<G> release);

        /** The release ended with {@code outcome}, on whatever thread learned it. */
        void releaseEnded(QueueRelease<G> release, Outcome outcome, KeeperException cause);
    }

    private static final long FIRST_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 2_000;

    private final SessionCore core;
    private final Owner<G> owner;
    /** The grant given up, with its node: held again if ZooKeeper refuses the delete for good. */
    final HeldGrant<G> held;

    final String node;
    /** The delete with what goes with it, as Curator built them (its namespace applied). */
    private final List<Op> withExtras;
    /** The delete alone: once a node that went with the grant is found gone (an operator). */
    private final List<Op> alone;
    /**
     * Completes when the release is confirmed; exceptionally with the service's loss when the grant turns out to
     * have been lost (or the session with it), or with the failure when ZooKeeper refused the delete.
     */
    final CompletableFuture<Void> confirmed = new CompletableFuture<>();

    private final Object lock = new Object();
    private boolean extrasGone;
    private boolean inFlight;
    /** A copy was answered with a connection loss (or not at all): it may have been applied. */
    private boolean maybeApplied;

    private boolean finished;
    private ScheduledFuture<?> retry;
    private long backoffMs = FIRST_BACKOFF_MS;
    /** Set by the first to report the grant's end to the listeners: the release's answer or the service's loss. */
    private final AtomicBoolean endReported = new AtomicBoolean();
    /** Set once a caller was told that the release is unconfirmed: the grant can no longer be handed back. */
    private volatile boolean givenUp;

    QueueRelease(SessionCore core, Owner<G> owner, HeldGrant<G> held, List<CuratorOp> extra) throws Exception {
        this.core = core;
        this.owner = owner;
        this.held = held;
        this.node = held.node();
        CuratorFramework c = core.client();
        Op delete = c.transactionOp().delete().forPath(node).get();
        List<Op> ops = new ArrayList<>();
        for (CuratorOp op : extra) {
            ops.add(op.get());
        }
        ops.add(delete);
        this.withExtras = List.copyOf(ops);
        this.alone = List.of(delete);
    }

    /** Sends the first copy; returns at once. */
    void start() {
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

    /** The own node was seen gone (its watch): the release, once a copy may have been applied; else its answer decides. */
    void seenGone() {
        synchronized (lock) {
            if (!maybeApplied) {
                return; // the copy in flight is answered right after this event, on the same connection
            }
        }
        finish(Outcome.DELETED, null);
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
    public HeldGrant<G> held() {
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
        List<Op> ops;
        synchronized (lock) {
            if (finished || inFlight) {
                return;
            }
            inFlight = true;
            retry = null;
            ops = extrasGone ? alone : withExtras;
        }
        ZooKeeper zk;
        try {
            zk = core.client().getZookeeperClient().getZooKeeper();
        } catch (IllegalStateException closed) {
            finish(Outcome.SESSION_ENDED, null); // the client is closed: its session, and the node, ended with it
            return;
        } catch (Exception notConnected) {
            notSent(); // Curator has no connection now: nothing was sent
            return;
        }
        if (zk.getSessionId() != core.sessionId()) {
            finish(Outcome.SESSION_ENDED, null); // the client is on another session: ours expired, the node with it
            return;
        }
        try {
            zk.multi(ops, (rc, path, ctx, results) -> answered(rc, results, ops), null);
        } catch (RuntimeException e) {
            notSent();
        }
    }

    private void notSent() {
        synchronized (lock) {
            inFlight = false;
        }
        later();
    }

    private void answered(int rc, List<OpResult> results, List<Op> sent) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        Outcome end = null;
        boolean again = false;
        boolean retryLater = false;
        KeeperException refusal = null;
        synchronized (lock) {
            inFlight = false;
            if (finished) {
                return;
            }
            if (code == null) {
                maybeApplied = true;
                retryLater = true;
            } else {
                switch (code) {
                    case OK -> end = Outcome.DELETED;
                    case NONODE -> {
                        if (failedAt(results, sent.size()) < sent.size() - 1) {
                            extrasGone =
                                    true; // a node that went with the grant is gone: the own node alone, never that
                            // path again
                            again = true;
                        } else {
                            end = maybeApplied ? Outcome.DELETED : Outcome.GONE_BEFORE;
                        }
                    }
                    case CONNECTIONLOSS, OPERATIONTIMEOUT, REQUESTTIMEOUT, SESSIONMOVED -> {
                        maybeApplied = true;
                        retryLater = true;
                    }
                    case SESSIONEXPIRED -> end = Outcome.SESSION_ENDED;
                    default -> refusal = KeeperException.create(code, node);
                }
            }
        }
        if (end != null) {
            finish(end, null);
        } else if (again) {
            send();
        } else if (refusal != null) {
            if (owner.releaseRefused(this)) {
                finish(Outcome.REFUSED, refusal);
            } else {
                later(); // the grant was given up already: keep trying until the session ends
            }
        } else if (retryLater) {
            later();
        }
    }

    /** @return the index of the operation that failed with "no node": the own node's (the last) when unknown */
    private static int failedAt(List<OpResult> results, int size) {
        if (results != null) {
            for (int i = 0; i < results.size(); i++) {
                if (results.get(i) instanceof OpResult.ErrorResult e
                        && e.getErr() == KeeperException.Code.NONODE.intValue()) {
                    return i;
                }
            }
        }
        return size - 1;
    }

    /** Sends the next copy after the back-off; hands the delete to Curator once the session's thread is gone. */
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
                // the session ended or was closed: below
            }
        }
        core.deleteInBackground(node); // Curator's guaranteed delete, for as long as the client lives
        finish(Outcome.SESSION_ENDED, null);
    }

    private void finish(Outcome outcome, KeeperException cause) {
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
        owner.releaseEnded(this, outcome, cause);
    }

    @Override
    public String toString() {
        return "release of " + node;
    }
}

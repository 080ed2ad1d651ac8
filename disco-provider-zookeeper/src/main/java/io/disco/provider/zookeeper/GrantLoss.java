package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The loss of one queue service: the end of what it held or waited for, when its session is lost, its own node
 * is deleted by anybody else (or found gone), or a release finds the node gone before it. The loss is recorded
 * once ({@link GrantLedger#lose}); then the service leaves its session, the acquisition in progress fails with it,
 * whatever is left of the service's nodes is deleted in the background (the session may still live), an
 * unconfirmed release stops, and the service's {@code done()} completes. A held grant's loss is reported again by
 * the next release call.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
final class GrantLoss<G extends Fenced, E extends DiscoException> {

    private final SessionCore core;
    private final QueueProtocol<G> names;
    private final GrantLedger<G, HeldGrant<G>, QueueAttempt<G>, QueueRelease<G>, E> ledger;
    /** The service, as its session knows it. */
    private final SessionMember member;
    /** Makes the service's kind of loss from a message and a cause. */
    private final BiFunction<String, Throwable, E> exception;

    private final CompletableFuture<Void> done;
    private final GrantEvents events;

    GrantLoss(
            SessionCore core,
            QueueProtocol<G> names,
            GrantLedger<G, HeldGrant<G>, QueueAttempt<G>, QueueRelease<G>, E> ledger,
            SessionMember member,
            BiFunction<String, Throwable, E> exception,
            CompletableFuture<Void> done,
            GrantEvents events) {
        this.events = events;
        this.core = core;
        this.names = names;
        this.ledger = ledger;
        this.member = member;
        this.exception = exception;
        this.done = done;
    }

    /** @return the service's loss for {@code reason}, naming the primitive and where ZooKeeper is */
    E lost(String reason, Throwable cause) {
        return exception.apply(
                "the " + names.what() + " on " + names.name + " (ZooKeeper at " + core.connectString() + ") was lost: "
                        + reason,
                cause);
    }

    /** Loses the service with {@code reason}, unless it is closed or lost already. */
    void lose(String reason, Throwable cause) {
        GrantLedger.Ending<QueueAttempt<G>, HeldGrant<G>, QueueRelease<G>, E> end =
                ledger.lose(() -> lost(reason, cause));
        if (end == null) {
            return;
        }
        core.unregister(member);
        if (end.acquisition() != null) {
            end.acquisition().fail(end.loss());
        }
        if (end.held() != null) {
            events.ended(end.held().sinceNanos(), end.loss());
            core.deleteInBackground(end.held().node()); // if the session still lives, leave nothing behind
        }
        QueueRelease<G> r = end.release();
        if (r != null) {
            if (r.firstEnd()) {
                events.ended(r.held.sinceNanos(), end.loss());
            }
            r.stop();
            r.confirmed.completeExceptionally(end.loss());
            core.deleteInBackground(r.node); // if the session still lives, the release's delete goes on
        }
        core.deliver(() -> done.complete(null));
    }

    /**
     * The own node is gone (its watch, or a caller's failed write): the loss of a held grant, unless it is the node
     * of the release in progress, whose deletion is that release's (never a loss).
     */
    void ownNodeDeleted(String node) {
        GrantLedger.Gone<QueueRelease<G>> gone = ledger.gone(held -> node.equals(held.node()));
        if (gone.release() != null) {
            gone.release().seenGone();
        } else if (gone.held()) {
            lose("its node " + node + " was deleted by somebody else", null);
        }
    }
}

package io.disco.provider.redis;

import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The loss of one queue service: the end of what it held or waited for, when its session is lost, its claim is
 * deleted behind its back or expired (a renewal, a break's message, a re-check), or a release finds the claim gone
 * before it. The loss is recorded once ({@link GrantLedger#lose}); then the service leaves its session, the
 * acquisition in progress fails with it, whatever is left of the service's claims is deleted in the background (the
 * session may still live; not while it is frozen), an unconfirmed release stops, and the service's {@code done()}
 * completes. A held grant's loss is reported again by the next release call.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
final class GrantLoss<G extends Fenced, E extends DiscoException> {

    private final SessionCore core;
    private final ClaimProtocol<G> names;
    private final GrantLedger<G, HeldClaim<G>, QueueClaim<G>, ClaimRelease<G>, E> ledger;
    private final SessionMember member;
    private final BiFunction<String, Throwable, E> exception;
    private final CompletableFuture<Void> done;
    private final GrantEvents events;

    GrantLoss(
            SessionCore core,
            ClaimProtocol<G> names,
            GrantLedger<G, HeldClaim<G>, QueueClaim<G>, ClaimRelease<G>, E> ledger,
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

    /** @return the service's loss for {@code reason}, naming the primitive and where Redis is */
    E lost(String reason, Throwable cause) {
        return exception.apply(
                "the " + names.what() + " on " + names.name + " (" + core.where() + ") was lost: " + reason, cause);
    }

    /** Loses the service with {@code reason}, unless it is closed or lost already. */
    void lose(String reason, Throwable cause) {
        GrantLedger.Ending<QueueClaim<G>, HeldClaim<G>, ClaimRelease<G>, E> end =
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
            core.liveness().unregister(end.held().key());
            core.deleteInBackground(names.name, end.held().id()); // if the session still lives, leave nothing behind
        }
        ClaimRelease<G> r = end.release();
        if (r != null) {
            if (r.firstEnd()) {
                events.ended(r.held.sinceNanos(), end.loss());
            }
            r.stop();
            r.confirmed.completeExceptionally(end.loss());
            core.deleteInBackground(names.name, r.held.id());
        }
        core.deliver(() -> done.complete(null));
    }

    /**
     * The claim {@code key} is gone: the loss of a held grant or of the claim waiting, unless it is the claim of the
     * release in progress, whose deletion is that release's (never a loss).
     *
     * @param pendingKey the key of the acquisition in progress, or null
     */
    void claimGone(String key, String pendingKey, String reason) {
        GrantLedger.Gone<ClaimRelease<G>> gone = ledger.gone(held -> key.equals(held.key()));
        if (gone.release() != null) {
            gone.release().seenGone();
        } else if (gone.held() || key.equals(pendingKey)) {
            lose(reason, null);
        }
    }
}

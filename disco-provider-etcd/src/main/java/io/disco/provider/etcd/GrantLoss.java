package io.disco.provider.etcd;

import io.disco.core.internal.grant.Acquisition;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.fencing.DiscoException;

/**
 * The loss of one service: the end of what it held or waited for, when its lease is lost, its held key is deleted
 * by somebody else, or a release finds the key gone before it. The loss is recorded once in the
 * {@link GrantLedger}; then the held grant ends (the listeners hear it), an unconfirmed release stops and its
 * waiters learn the loss, the acquisition in progress fails with it, and the service finishes. A held grant's loss
 * is reported again by the next release call.
 *
 * @param <G> the grant
 * @param <L> the service's loss
 */
final class GrantLoss<G, L extends DiscoException> {

    private final SessionCore session;
    private final GrantLedger<G, HeldGrant<G>, Acquisition<G>, KeyRelease<G>, L> ledger;
    private final GrantEvents events;
    /** Finishes the service: its watches closed, its {@code done()} completed. */
    private final Runnable finish;

    GrantLoss(
            SessionCore session,
            GrantLedger<G, HeldGrant<G>, Acquisition<G>, KeyRelease<G>, L> ledger,
            GrantEvents events,
            Runnable finish) {
        this.session = session;
        this.ledger = ledger;
        this.events = events;
        this.finish = finish;
    }

    /** @return whether the service was lost now (false: closed or lost already) */
    boolean lose(L loss) {
        GrantLedger.Ending<Acquisition<G>, HeldGrant<G>, KeyRelease<G>, L> end = ledger.lose(() -> loss);
        if (end == null) {
            return false;
        }
        if (end.held() != null) {
            events.ended(end.held().sinceNanos(), loss);
            end.held().stopWatching();
        }
        KeyRelease<G> r = end.release();
        if (r != null) {
            r.stop();
            if (r.firstEnd()) {
                events.ended(r.held().sinceNanos(), loss);
            }
            r.held().stopWatching();
            session.deliver(() -> r.confirmed.completeExceptionally(loss)); // its waiters learn the loss
        }
        if (end.acquisition() != null) {
            end.acquisition().fail(loss);
        }
        finish.run();
        return true;
    }
}

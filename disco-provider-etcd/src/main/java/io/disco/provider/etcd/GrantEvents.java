package io.disco.provider.etcd;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.time.Duration;

/**
 * What the session's listeners hear of one service's grants: acquired (with how long the acquisition waited) and
 * ended (released, or lost, with how long it was held). Nothing is built when nobody listens.
 */
final class GrantEvents {

    private final SessionCore session;
    private final String kind;
    private final String name;

    GrantEvents(SessionCore session, String kind, String name) {
        this.session = session;
        this.kind = kind;
        this.name = name;
    }

    /** A grant was committed at {@code sinceNanos}, for an acquisition started at {@code startedNanos}. */
    void acquired(HeldGrant<?> held, long startedNanos) {
        if (!session.listened()) {
            return;
        }
        Duration waited = Duration.ofNanos(held.sinceNanos() - startedNanos);
        String key = held.keyText();
        FencingToken token = held.grant() instanceof Fenced f ? f.token() : null;
        session.tell(l -> l.acquired(session.front(), kind, name, key, token, waited));
    }

    /** The grant held since {@code heldSince} ended: released ({@code loss} null) or lost. */
    void ended(long heldSince, Throwable loss) {
        if (!session.listened()) {
            return;
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - heldSince);
        if (loss == null) {
            session.tell(l -> l.released(session.front(), kind, name, heldFor));
        } else {
            session.tell(l -> l.grantLost(session.front(), kind, name, loss, heldFor));
        }
    }
}

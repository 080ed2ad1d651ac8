package io.disco.core.internal.grant;

import io.disco.core.DiscoSession;
import io.disco.core.Primitive;
import io.disco.core.SessionListener;
import io.disco.core.internal.SessionEvents;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Locale;

/**
 * What a session's listeners hear of one service's grants, the same from every backend: acquired (with how long the
 * acquisition waited), the acquisition's failure, and the grant's end (released, or lost, with how long it was held).
 * The primitive is told as {@link SessionListener} says: {@code lock}, {@code rwlock}, {@code semaphore},
 * {@code election}. Nothing is built when nobody listens.
 */
public final class GrantEvents {

    private final SessionEvents events;
    private final DiscoSession session;
    private final String primitive;
    private final String name;

    /**
     * @param events the session's listeners
     * @param session the session, as listeners see it
     * @param primitive what the service is
     * @param name the service's name
     */
    public GrantEvents(SessionEvents events, DiscoSession session, Primitive primitive, String name) {
        this.events = events;
        this.session = session;
        this.primitive = primitive.name().toLowerCase(Locale.ROOT);
        this.name = name;
    }

    /**
     * A grant was committed.
     *
     * @param token the grant's token ({@link #tokenOf}), read before: this is told under the ledger's monitor, where
     *     nothing but the telling runs
     * @param key the grant's key or node
     * @param startedNanos when the acquisition started, on {@link System#nanoTime()}
     * @param sinceNanos when the grant was committed, on the same clock
     */
    public void acquired(FencingToken token, String key, long startedNanos, long sinceNanos) {
        if (!events.listened()) {
            return;
        }
        Duration waited = Duration.ofNanos(sinceNanos - startedNanos);
        events.tell(l -> l.acquired(session, primitive, name, key, token, waited));
    }

    /**
     * @param grant a grant
     * @return its token when it is {@link Fenced}, else null
     */
    public static FencingToken tokenOf(Object grant) {
        return grant instanceof Fenced f ? f.token() : null;
    }

    /**
     * An acquisition ended without a grant (not a try that found the grant taken).
     *
     * @param cause why
     * @param startedNanos when it started, on {@link System#nanoTime()}
     */
    public void acquisitionFailed(Throwable cause, long startedNanos) {
        if (!events.listened()) {
            return;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - startedNanos);
        events.tell(l -> l.acquisitionFailed(session, primitive, name, cause, waited));
    }

    /**
     * The grant held since {@code heldSince} ended.
     *
     * @param heldSince when it was committed, on {@link System#nanoTime()}
     * @param loss null for a release, else the loss
     */
    public void ended(long heldSince, Throwable loss) {
        if (!events.listened()) {
            return;
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - heldSince);
        if (loss == null) {
            events.tell(l -> l.released(session, primitive, name, heldFor));
        } else {
            events.tell(l -> l.grantLost(session, primitive, name, loss, heldFor));
        }
    }
}

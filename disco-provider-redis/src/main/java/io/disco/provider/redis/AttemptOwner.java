package io.disco.provider.redis;

import io.disco.core.internal.grant.CallerWait;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;

/**
 * What an acquisition ({@link QueueClaim}), its worker ({@link ClaimWorker}) and its synchronous caller
 * ({@link CallerWait}) need of the service that runs it, and all they know of it: its session, its hooks
 * ({@link ClaimProtocol}), whether its last release is still unconfirmed, the commit of a grant, its claims' loss.
 * An abstract class, not an interface, to keep these methods package-private.
 *
 * @param <G> the grant
 */
abstract class AttemptOwner<G extends Fenced> extends ClaimProtocol<G> implements CallerWait.Service {

    AttemptOwner(String name, String what) {
        super(name, what);
    }

    /** @return the session the service runs on */
    abstract SessionCore core();

    /** @return whether a release of this service is unconfirmed: no acquisition creates a claim before it is */
    @Override
    public abstract boolean releaseUnconfirmed();

    @Override
    public final String subject() {
        return "the " + what() + " on " + name;
    }

    @Override
    public final String backend() {
        return core().where();
    }

    @Override
    public final Duration requestTimeout() {
        return core().requestTimeout();
    }

    /**
     * Hands {@code grant} to the attempt's caller and records it as held; or refuses, when the attempt was given up
     * or the service ended meanwhile.
     *
     * @return whether the grant was committed (the attempt's claim is then the held one)
     */
    abstract boolean commit(QueueClaim<G> a, G grant, String tokenText);

    /** The claim with {@code key} is gone (deleted behind the owner's back, or expired): the loss, if it is this service's. */
    abstract void claimGone(String key, String reason);

    /** The loss of the service, with {@code reason}. */
    abstract void lose(String reason, Throwable cause);

    /** @return the service's loss exception for {@code reason}, without losing the service */
    abstract DiscoException lost(String reason, Throwable cause);
}

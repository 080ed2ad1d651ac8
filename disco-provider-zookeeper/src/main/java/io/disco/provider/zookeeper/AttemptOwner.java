package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.CallerWait;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;

/**
 * What an acquisition ({@link QueueAttempt}), its worker ({@link QueueWorker}) and its synchronous caller
 * ({@link CallerWait}) need of the service that runs it, and all they know of it: its session, its hooks
 * ({@link QueueProtocol}), whether its last release is still unconfirmed, the commit of a grant, and the loss. So
 * the acquire machine depends on no primitive and on no service's state. An abstract class, not an interface, to
 * keep these methods package-private.
 *
 * @param <G> the grant
 */
abstract class AttemptOwner<G extends Fenced> extends QueueProtocol<G> implements CallerWait.Service {

    AttemptOwner(String name, String what) {
        super(name, what);
    }

    /** @return the session the service runs on */
    abstract SessionCore core();

    /** @return whether a release of this service is unconfirmed: no acquisition creates a node before it is (issue 44) */
    @Override
    public abstract boolean releaseUnconfirmed();

    @Override
    public final String subject() {
        return "the " + what() + " on " + name;
    }

    @Override
    public final String backend() {
        return "ZooKeeper at " + core().connectString();
    }

    @Override
    public final Duration requestTimeout() {
        return core().requestTimeout();
    }

    /**
     * Hands {@code grant} to the attempt's caller and records it as held, then watches the held node (its deletion
     * by anybody else is the loss); or refuses, when the attempt was given up or the service ended meanwhile.
     *
     * @return whether the grant was committed (the attempt's node is then the held one)
     */
    abstract boolean commit(QueueAttempt<G> a, G grant);

    /** The loss of the service, with {@code reason}: what it held or waited for is gone. */
    abstract void lose(String reason, Throwable cause);

    /** @return the service's loss exception for {@code reason}, without losing the service */
    abstract DiscoException lost(String reason, Throwable cause);

    /** @return a failure of ZooKeeper while {@code doing} something to this service's primitive */
    abstract DiscoException zkFailure(String doing, Exception e);
}

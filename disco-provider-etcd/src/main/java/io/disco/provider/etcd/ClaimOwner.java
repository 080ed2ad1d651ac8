package io.disco.provider.etcd;

import io.disco.core.internal.grant.Acquisition;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;

/**
 * What a {@link QueueClaim} needs of the service that runs it, and all it knows of it: its session,
 * its names for messages, the watch of its own key, the commit of a grant, and the loss of a held
 * key. So the one acquire step shared by every primitive depends on no primitive, as etcd's Go
 * {@code concurrency} recipes depend on their session only. An abstract class, not an interface, to
 * keep these methods package-private.
 *
 * @param <G> the grant type
 */
abstract class ClaimOwner<G> {

    abstract SessionCore session();

    /** What the service is called in messages: "lock", "election", ... */
    abstract String kind();

    /** The service's name. */
    abstract String name();

    /** @return what the session's listeners hear of this owner's grants */
    abstract GrantEvents events();

    /** The service's "lost" exception (a lock's {@code LockLostException}, ...). */
    abstract DiscoException lostException(String message, Throwable cause);

    /** Session thread: the watch of {@code ownKey}, opened by its first follower. */
    abstract OwnKeyWatch ownKeyWatch(ByteSequence ownKey);

    /**
     * Commits the grant {@code claim} won: hands it to the caller ({@link Acquisition#handOver}, the commit point)
     * and records it as held, or refuses: when the service is closed or lost, or the caller has already given up
     * (cancelled, timed out). It is one atomic step, so either the caller gets the grant and the service holds it,
     * or the caller's giving up wins and the claim is withdrawn; never neither.
     *
     * @param claim the claim that won, as the service's ledger knows it
     * @param key the grant's key, created at {@code createRevision}
     * @param watch the watch following that key incarnation, which the held grant takes over
     * @param startedNanos when the acquisition started (System.nanoTime())
     * @return null when committed, else why not (the claim then withdraws with it)
     */
    abstract Throwable commit(
            QueueClaim<G> claim,
            G grant,
            ByteSequence key,
            long createRevision,
            OwnKeyWatch.Following watch,
            long startedNanos);

    /** Session thread: the held key incarnation created at {@code createRevision} was deleted, not by a release. */
    abstract void heldKeyDeleted(long createRevision);
}

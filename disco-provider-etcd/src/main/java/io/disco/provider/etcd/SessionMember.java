package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import java.util.concurrent.CompletableFuture;

/** Something bound to a session's lifetime: a service, registered in its session's {@link ServiceRegistry}. */
interface SessionMember {

    /** The service's name, whose keys all lie under {@code name + "/"}. */
    String name();

    /** What the service is called in messages. */
    String kind();

    /** The lease is lost; called on the lease thread: must not block. */
    void sessionLost(DiscoException cause);

    /** The session is being closed; called on the closing thread. */
    void sessionClosed();

    /**
     * Whether the incarnation of {@code key} (one of this service's keys) created at
     * {@code createRevision} belongs to one of its claims or grants; asked by {@link LateCreates}
     * on the session thread.
     *
     * @return a completed future when it does; null when it does not (it is then deleted); an
     *         incomplete one when that is not known yet: ask again once it completes
     */
    CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision);
}

package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import java.util.concurrent.CompletableFuture;

/**
 * One release of a service's held grant whose outcome is awaited ({@link GrantRelease}): {@code confirmed}
 * completes when the grant is known ended (the delete answered, or the session or the service ended),
 * {@code deleted} when etcd answered its delete, or the session ended. While its delete's outcome is
 * unknown, it keeps every claim of the session from creating the key ({@link #guard}).
 */
record PendingRelease(ByteSequence key, CompletableFuture<Void> confirmed, CompletableFuture<Void> deleted) {

    static final PendingRelease NONE =
            new PendingRelease(null, CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(null));

    /**
     * The delete's outcome is unknown: until etcd answers it, no claim of this session may create
     * (and so adopt) the key, whatever service makes it (a name's next service, after this one closed).
     */
    void guard(SessionCore session) {
        if (key != null && !deleted.isDone()) {
            session.runOnSession(() -> session.lateCreates().awaitDelete(key, deleted));
        }
    }
}

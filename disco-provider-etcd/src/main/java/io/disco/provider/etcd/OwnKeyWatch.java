package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.TimeUnit;

/**
 * Watches a service's own key for deletes, one watch for every incarnation of the key: a claim
 * {@linkplain #follow follows} the incarnation it created (the key with CreateRevision
 * {@code createRevision}) from the moment it learns of it until the claim or its grant ends, and
 * {@code onDeleted} runs once when that incarnation is gone: the lease expired or was revoked, or
 * somebody deleted the key (an operator's {@code etcdctl del}). While waiting this fails the wait at
 * once; while held it ends the grant, which is a loss of the service.
 *
 * <p>The watch outlives the incarnation it was opened for: an owner that releases and acquires
 * again (the same key, a new incarnation) follows the new one on the watch that is already open,
 * so a hot loop costs no watch create per acquisition. A watch that follows nothing is closed after
 * {@link #LINGER_MS}. A delete belongs to the followed incarnation when it came after its creation:
 * the event's revision is above the CreateRevision (a late event of an earlier incarnation is below).
 *
 * <p>The watch starts just after a revision at which the followed key was seen, and a running
 * watch started before any later incarnation was created, so no delete can slip through. When the
 * watch breaks (compacted, cancelled, its member stopped answering: see {@link WatchLiveness}), one
 * read decides: the key gone or re-created means deleted, else the watch starts again just after
 * that read. Confined to the session thread.
 */
final class OwnKeyWatch {

    /** How long a watch that follows nothing stays open for the owner's next acquisition. */
    static final long LINGER_MS = 1000;

    private final SessionCore session;
    private final ByteSequence key;
    private Watch.Watcher watcher;
    private long generation;
    private boolean closed;
    /** The followed incarnation, or null. */
    private Following following;
    /** When the watch last stopped following (System.nanoTime()). */
    private long idleSinceNanos;
    /** Whether a linger check is scheduled: one at a time, so a hot loop costs no timer per release. */
    private boolean lingerScheduled;

    OwnKeyWatch(SessionCore session, ByteSequence key) {
        this.session = session;
        this.key = key;
    }

    /** One claim's interest in one incarnation of the key. */
    final class Following {
        private final long createRevision;
        private final long seenAt;
        private final Runnable onDeleted;

        private Following(long createRevision, long seenAt, Runnable onDeleted) {
            this.createRevision = createRevision;
            this.seenAt = seenAt;
            this.onDeleted = onDeleted;
        }

        /**
         * Stops following this incarnation (its owner deletes it, or it is over); idempotent; any
         * thread (it takes effect on the session thread, after the tasks already queued there, so the
         * owner still checks its own state in {@code onDeleted}).
         */
        void stop() {
            session.runOnSession(() -> unfollow(this));
        }
    }

    /**
     * Follows the incarnation created at {@code createRevision}, which existed at revision
     * {@code seenAt}; session thread.
     */
    Following follow(long createRevision, long seenAt, Runnable onDeleted) {
        Following f = new Following(createRevision, seenAt, onDeleted);
        following = f;
        if (watcher == null && !closed) {
            watchFrom(seenAt + 1);
        }
        return f;
    }

    private void unfollow(Following f) {
        if (following != f) {
            return;
        }
        following = null;
        idleSinceNanos = System.nanoTime();
        if (!lingerScheduled) {
            scheduleLinger(TimeUnit.MILLISECONDS.toNanos(LINGER_MS));
        }
    }

    private void scheduleLinger(long delayNanos) {
        lingerScheduled = session.schedule(this::lingered, delayNanos, TimeUnit.NANOSECONDS) != null;
    }

    /** Closes the watch once it has followed nothing for {@link #LINGER_MS}; a follow since then keeps it. */
    private void lingered() {
        lingerScheduled = false;
        if (following != null || watcher == null) {
            return; // in use again (its next unfollow schedules the next check), or closed already
        }
        long left = idleSinceNanos + TimeUnit.MILLISECONDS.toNanos(LINGER_MS) - System.nanoTime();
        if (left > 0) {
            scheduleLinger(left); // followed and unfollowed again meanwhile
        } else {
            closeWatcher();
        }
    }

    /** Closes the watch for good (the service is finished); any thread. */
    void close() {
        session.runOnSession(() -> {
            closed = true;
            following = null;
            closeWatcher();
        });
    }

    private void watchFrom(long revision) {
        long gen = ++generation;
        WatchOption opt = WatchOption.builder()
                .withRevision(revision)
                .withNoPut(true)
                .withRequireLeader(true)
                .withCreateNotify(true)
                .build();
        watcher = session.watch(key, opt, SessionWatches.Silence.GUARD, r -> onEvents(r, gen), () -> onBroken(gen));
    }

    private void closeWatcher() {
        generation++;
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
    }

    private void onEvents(WatchResponse response, long gen) {
        if (gen != generation || following == null) {
            return;
        }
        for (WatchEvent ev : response.getEvents()) {
            if (ev.getEventType() == WatchEvent.EventType.DELETE
                    && ev.getKeyValue().getModRevision() > following.createRevision) {
                deleted();
                return;
            }
        }
    }

    private void onBroken(long gen) {
        if (gen != generation) {
            return;
        }
        closeWatcher();
        if (following == null) {
            return; // nobody to watch for: the next follow opens a new watch
        }
        long next = generation;
        session.untilAnswered(
                        "read of the own key",
                        () -> session.client().getKVClient().get(key))
                .thenAccept((GetResponse r) -> session.runOnSession(() -> {
                    Following f = following;
                    if (closed || r == null || f == null || next != generation || watcher != null) {
                        return; // closed, the session ended, or a later follow opened a watch
                    }
                    if (r.getHeader().getRevision() < f.seenAt) {
                        watchFrom(f.seenAt + 1); // the read predates the incarnation now followed
                    } else if (r.getKvs().isEmpty() || r.getKvs().get(0).getCreateRevision() != f.createRevision) {
                        deleted();
                    } else {
                        watchFrom(r.getHeader().getRevision() + 1);
                    }
                }));
    }

    private void deleted() {
        Following f = following;
        unfollow(f);
        f.onDeleted.run();
    }
}

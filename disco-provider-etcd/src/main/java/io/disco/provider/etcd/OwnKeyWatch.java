package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;

/**
 * Watches one incarnation of an owner's own key (the key with CreateRevision {@code createRevision})
 * from the moment its claim learns of it until the claim or its grant ends, and calls
 * {@code onDeleted} once when it is gone: the lease expired or was revoked, or somebody deleted the
 * key (an operator's {@code etcdctl del}). While waiting this fails the wait at once; while held it
 * ends the grant, which is a loss of the service.
 *
 * <p>The watch starts just after a revision at which the key was seen, so no delete can slip
 * through. When the watch breaks (compacted, cancelled, its member stopped answering: see
 * {@link WatchLiveness}), one read decides: the key gone or re-created means deleted, else the watch
 * starts again just after that read. Confined to the session thread.
 */
final class OwnKeyWatch {

    private final EtcdSession session;
    private final ByteSequence key;
    private final long createRevision;
    private final Runnable onDeleted;
    private Watch.Watcher watcher;
    private long generation;
    private boolean stopped;

    private OwnKeyWatch(EtcdSession session, ByteSequence key, long createRevision, Runnable onDeleted) {
        this.session = session;
        this.key = key;
        this.createRevision = createRevision;
        this.onDeleted = onDeleted;
    }

    /** Starts watching {@code key}, which existed with {@code createRevision} at revision {@code seenAt}. Session thread. */
    static OwnKeyWatch start(EtcdSession session, ByteSequence key, long createRevision, long seenAt, Runnable onDeleted) {
        OwnKeyWatch w = new OwnKeyWatch(session, key, createRevision, onDeleted);
        w.watchFrom(seenAt + 1);
        return w;
    }

    private void watchFrom(long revision) {
        long gen = ++generation;
        WatchOption opt = WatchOption.builder().withRevision(revision).withNoPut(true).withRequireLeader(true)
                .withCreateNotify(true).build();
        watcher = session.watch(key, opt, EtcdSession.Silence.GUARD, r -> onEvents(r, gen), () -> onBroken(gen));
    }

    private void onEvents(WatchResponse response, long gen) {
        if (stopped || gen != generation) {
            return;
        }
        for (WatchEvent ev : response.getEvents()) {
            if (ev.getEventType() == WatchEvent.EventType.DELETE) {
                deleted();
                return;
            }
        }
    }

    private void onBroken(long gen) {
        if (stopped || gen != generation) {
            return;
        }
        watcher.close();
        long next = ++generation;
        session.untilAnswered("read of the own key", () -> session.client().getKVClient().get(key))
                .thenAccept((GetResponse r) -> session.runOnSession(() -> {
                    if (stopped || r == null || next != generation) {
                        return; // stopped, or the session ended
                    }
                    if (r.getKvs().isEmpty() || r.getKvs().get(0).getCreateRevision() != createRevision) {
                        deleted();
                    } else {
                        watchFrom(r.getHeader().getRevision() + 1);
                    }
                }));
    }

    private void deleted() {
        stop();
        onDeleted.run();
    }

    /**
     * Stops watching; idempotent; any thread (it takes effect on the session thread, after the tasks
     * already queued there, so the owner still checks its own state in {@code onDeleted}).
     */
    void stop() {
        session.runOnSession(this::stopHere);
    }

    private void stopHere() {
        if (!stopped) {
            stopped = true;
            generation++;
            if (watcher != null) {
                watcher.close();
            }
        }
    }
}

package io.disco.provider.etcd;

import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;

/**
 * Whether a writer has queued behind one read grant of a read/write lock (issue 45): every writer key
 * created after the reader's own key waits for it (a writer waits for every key created before its own),
 * and none created before it is left while the reader holds (the reader was admitted only once they were
 * gone). So the writers' range is watched for creations from the reader's own key on; the first one sets
 * {@link #queued()} for good and ends the watch. A broken watch (compacted, cut) is replaced by a count of
 * the range and a watch from that read. Nothing here blocks; the answer lags etcd by about a round trip.
 */
final class QueuedWriters {

    private final SessionCore session;
    private final KeyRange writers;
    /** The CreateRevision of the reader's own key: the read grant this watches for. */
    final long readerRevision;

    private volatile boolean queued;
    private volatile boolean closed;
    /** Session thread only. */
    private Watch.Watcher watcher;

    QueuedWriters(SessionCore session, KeyRange writers, long readerRevision) {
        this.session = session;
        this.writers = writers;
        this.readerRevision = readerRevision;
        session.runOnSession(() -> watchFrom(readerRevision + 1));
    }

    /** @return whether a writer queued behind the read grant (final once true) */
    boolean queued() {
        return queued;
    }

    private void watchFrom(long revision) {
        if (closed || queued) {
            return;
        }
        WatchOption option = WatchOption.builder()
                .withRange(writers.end())
                .withRevision(revision)
                .withNoDelete(true)
                .withRequireLeader(true)
                .withCreateNotify(true)
                .build();
        watcher = session.watch(writers.start(), option, SessionWatches.Silence.GUARD, this::onEvents, this::broken);
    }

    private void onEvents(WatchResponse response) {
        for (WatchEvent ev : response.getEvents()) {
            if (ev.getEventType() == WatchEvent.EventType.PUT
                    && ev.getKeyValue().getCreateRevision() == ev.getKeyValue().getModRevision()
                    && ev.getKeyValue().getCreateRevision() > readerRevision) {
                queued = true;
                watcher.close(); // nothing more to learn
                return;
            }
        }
    }

    /** The watch ended: closed (by us), or broken. Count what is there now, and watch on from that read. */
    private void broken() {
        if (closed || queued) {
            return;
        }
        session.untilAnswered(
                        "read of the queued writers",
                        () -> session.client()
                                .getKVClient()
                                .get(
                                        writers.start(),
                                        GetOption.builder()
                                                .withRange(writers.end())
                                                .withCountOnly(true)
                                                .build()))
                .thenAccept(r -> {
                    if (r == null) {
                        return; // the session ended
                    }
                    if (r.getCount() > 0) {
                        queued = true;
                    } else {
                        session.runOnSession(() -> watchFrom(r.getHeader().getRevision() + 1));
                    }
                });
    }

    /** Stops watching: the read grant ended. */
    void close() {
        closed = true;
        session.runOnSession(() -> {
            if (watcher != null) {
                watcher.close();
            }
        });
    }
}

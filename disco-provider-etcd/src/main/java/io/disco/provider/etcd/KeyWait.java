package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * A barrier's wait for a state of its keys: a read that either finds it or gives the revision it read at, then a
 * watch of the keys from etcd's current revision, each event tested in revision order; when the watch started after
 * the read's revision, the state is read once more (what changed in between is not in the watch). A watch from a past
 * revision would be "unsynced", its events served by etcd's catch-up loop every 100 ms (measured: a double barrier's
 * round of three took 66 ms at the median, its leaves waiting up to 100 ms for deletes long done), as the lock's
 * waiters found (design decisions, "A waiter watches its predecessor from etcd's current revision"). A watch that
 * breaks (compaction, a member that stops answering, a cancel by the server) is replaced by a fresh read and watch: a
 * compaction is never the caller's failure (rule 4). Cancelling the result closes the watch. Runs on the session
 * thread.
 */
abstract class KeyWait {

    /** What {@link #read()} answers when the wait is over. */
    static final long DONE = -1;

    private final SessionCore core;
    private final ByteSequence key;
    private final boolean prefix;
    private final WatchEvent.EventType wanted;
    private final CompletableFuture<Void> result = new CompletableFuture<>();
    // Session thread only.
    private Watch.Watcher watcher;
    /** The revision of the read the watch follows. */
    private long readAt;

    /**
     * @param key the key watched, or the prefix of the keys watched
     * @param prefix whether {@code key} is a prefix
     * @param wanted the events tested ({@link #done}); the others are not even sent
     */
    KeyWait(SessionCore core, ByteSequence key, boolean prefix, WatchEvent.EventType wanted) {
        this.core = core;
        this.key = key;
        this.prefix = prefix;
        this.wanted = wanted;
    }

    /**
     * Reads the state: {@link #DONE} if the wait is over, else the revision read at. Called on the session thread,
     * first, once more when the watch started after that revision, and after every broken watch; the events of the
     * watch may come before or after a later read's answer, and may repeat what it read.
     */
    abstract CompletableFuture<Long> read();

    /** @return whether {@code event}, the next one after what was read and tested, ends the wait */
    abstract boolean done(WatchEvent event);

    /** Starts the wait; @return completes when it is over, or with the reading's failure; cancel it to stop */
    final CompletableFuture<Void> start() {
        result.whenComplete((v, e) -> core.runOnSession(this::closeWatch));
        core.runOnSession(this::readAndWatch);
        return result;
    }

    private void readAndWatch() {
        if (result.isDone()) {
            return;
        }
        readThen(this::watch);
    }

    /**
     * Reads the state; on the session thread, the wait ends if the read failed or says it is over, else
     * {@code waiting} gets the revision read at.
     */
    private void readThen(LongConsumer waiting) {
        read().whenComplete((revision, failed) -> core.runOnSession(() -> {
            if (result.isDone()) {
                return;
            }
            if (failed != null) {
                result.completeExceptionally(failed);
            } else if (revision == DONE) {
                result.complete(null);
            } else {
                waiting.accept(revision);
            }
        }));
    }

    /** Watches the keys from etcd's current revision (a synced watch); the read it follows was at {@code revision}. */
    private void watch(long revision) {
        readAt = revision;
        WatchOption.Builder option =
                WatchOption.builder().withRequireLeader(true).withCreateNotify(true);
        if (prefix) {
            option.isPrefix(true);
        }
        if (wanted == WatchEvent.EventType.DELETE) {
            option.withNoPut(true);
        } else {
            option.withNoDelete(true);
        }
        watcher = core.watch(key, option.build(), SessionWatches.Silence.WAIT, this::onEvents, this::broken);
    }

    private void onEvents(WatchResponse response) {
        if (response.isCreatedNotify()) {
            if (response.getHeader().getRevision() > readAt) {
                readThen(stillWaiting -> {}); // changes between the read and the watch's start are not in it
            }
            return;
        }
        for (WatchEvent event : response.getEvents()) {
            if (!result.isDone() && event.getEventType() == wanted && done(event)) {
                result.complete(null);
            }
        }
    }

    private void broken() {
        closeWatch();
        if (!result.isDone()) {
            core.schedule(this::readAndWatch, 100, TimeUnit.MILLISECONDS);
        }
    }

    private void closeWatch() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
    }
}

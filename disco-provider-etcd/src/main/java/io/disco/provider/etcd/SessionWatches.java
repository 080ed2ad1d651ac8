package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a session's watches: under {@link WatchLiveness}, so that a watch whose member stops
 * answering breaks instead of leaving its owner waiting, with its events handed to the session
 * thread.
 */
final class SessionWatches {

    private static final Logger LOG = LoggerFactory.getLogger(SessionWatches.class);

    /** How often a watch should be heard from (see {@link WatchLiveness}). */
    enum Silence {
        /** A hand-over waits on it: probed after the probe timeout of silence. */
        WAIT,
        /** It guards against a rare event (a key deleted by somebody else, a late create): probed after 2 s of silence. */
        GUARD
    }

    private final Client client;
    private final SessionExecutors executors;
    private final long failoverNanos;
    private final WatchLiveness liveness;
    /** What the session is called in messages. */
    private final String session;

    SessionWatches(Client client, SessionExecutors executors, long failoverNanos, String session) {
        this.client = client;
        this.executors = executors;
        this.failoverNanos = failoverNanos;
        this.liveness = new WatchLiveness(executors.worker, probeTimeoutNanos(failoverNanos));
        this.session = session;
    }

    /** How long a watch may take to confirm its creation or answer a progress request: twice the failover delay. */
    static long probeTimeoutNanos(long failoverNanos) {
        return 2 * failoverNanos;
    }

    long probeTimeoutNanos() {
        return probeTimeoutNanos(failoverNanos);
    }

    /**
     * Watches {@code key} with {@code option}, which must ask for the created notification; jetcd
     * calls listeners on its event loop, so both callbacks run on the session thread. {@code onBroken}
     * runs when the watch errors or completes, which includes being closed. A watch whose member
     * stops answering is closed, so it breaks (see {@link WatchLiveness}): nobody waits on a frozen
     * member.
     */
    Watch.Watcher watch(
            ByteSequence key,
            WatchOption option,
            Silence silence,
            Consumer<WatchResponse> onEvents,
            Runnable onBroken) {
        if (!option.isCreatedNotify()) {
            throw new IllegalArgumentException("a probed watch must ask for the created notification");
        }
        long silenceNanos = silence == Silence.WAIT ? probeTimeoutNanos(failoverNanos) : TimeUnit.SECONDS.toNanos(2);
        return liveness.open(
                l -> client.getWatchClient().watch(key, option, l),
                listener(onEvents, onBroken),
                silenceNanos,
                () -> LOG.debug(
                        "a watch of {} on session {} did not confirm its creation or its member missed a progress"
                                + " request: moving it",
                        key.toString(StandardCharsets.UTF_8),
                        session));
    }

    private Watch.Listener listener(Consumer<WatchResponse> onEvents, Runnable onBroken) {
        return new Watch.Listener() {
            @Override
            public void onNext(WatchResponse response) {
                executors.runOnSession(() -> onEvents.accept(response));
            }

            @Override
            public void onError(Throwable t) {
                executors.runOnSession(onBroken);
            }

            @Override
            public void onCompleted() {
                executors.runOnSession(onBroken);
            }
        };
    }
}

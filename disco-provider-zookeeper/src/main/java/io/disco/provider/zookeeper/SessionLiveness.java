package io.disco.provider.zookeeper;

import io.disco.core.internal.session.SessionExecutors;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;

/**
 * How a session learns that it is alive, suspended or lost, on the session's thread.
 *
 * <p>The session's time to live is the client's negotiated session timeout {@code T}. A {@code sync} goes every
 * {@code T/4}, and the local monotonic time at which the latest <em>answered</em> one was sent is remembered: the
 * leader had heard from the session by then, so it cannot expire the session before that time plus {@code T}.
 * A {@code sync}, not a read: a follower answers a read by itself, also while the leader no longer hears it (a
 * one-way partition), and it is the leader that expires sessions, on the pings the followers pass on to it; a
 * {@code sync} goes through the leader and back. The
 * session is declared lost when {@code 2T/3} have passed since then without a newer answer, when Curator reports
 * the connection LOST, or when the client comes back on another session; so the loss is signalled before the
 * server could have expired the session (Curator's own LOST comes only after the whole timeout: Tech Note 14).
 * Curator's SUSPENDED and RECONNECTED move the {@link SessionStatus}. A {@code CuratorFramework} closed under the
 * session (a shutdown-order mistake Curator tells no listener of) is the loss at once, with that reason.
 */
final class SessionLiveness {

    /** What messages say when the application closed the client first. */
    static final String CLOSED_FIRST = "the CuratorFramework was closed before the ZooKeeper session that runs on it"
            + " (close the session, or the Disco, first and the CuratorFramework last)";

    /** Where a loss is reported: the session, which tells its services and ends. */
    interface Loss {
        void lose(String reason, Throwable cause);
    }

    /** Who hears how the liveness requests fare (the session's listeners), on the session's or Curator's thread. */
    interface Renewals {
        /** A liveness request was answered; the session is valid for {@code remaining} from now. */
        void renewed(Duration remaining);

        /** A liveness request failed, {@code failingFor} after the send time of the newest answered one. */
        void renewalFailing(Duration failingFor, Duration remaining, Throwable cause);
    }

    private final CuratorFramework client;
    private final String connectString;
    private final long sessionId;
    private final long timeoutNanos;
    private final SessionStatus status;
    private final SessionExecutors executors;
    private final Loss loss;
    private final Renewals renewals;
    private final ConnectionStateListener listener = this::onConnectionState;
    /** The local send time of the newest request that was answered on this session. */
    private final AtomicLong lastHeard;

    private volatile ScheduledFuture<?> pinger;
    private volatile ScheduledFuture<?> watchdog;

    SessionLiveness(
            CuratorFramework client,
            String connectString,
            SessionHandOut.Opened opened,
            SessionStatus status,
            SessionExecutors executors,
            Loss loss,
            Renewals renewals) {
        this.renewals = renewals;
        this.client = client;
        this.connectString = connectString;
        this.sessionId = opened.sessionId();
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(opened.timeoutMs());
        this.lastHeard = new AtomicLong(opened.heard());
        this.status = status;
        this.executors = executors;
        this.loss = loss;
    }

    /** Listens to Curator's connection events (on the session's thread) and starts the pings and the deadline's checks. */
    void start() {
        client.getConnectionStateListenable().addListener(listener, executors.sessionThread());
        this.pinger = executors.every(this::ping, Math.max(10_000_000L, timeoutNanos / 4));
        this.watchdog = executors.every(this::checkDeadline, Math.max(5_000_000L, timeoutNanos / 24));
    }

    /** Stops the pings, the checks and the listening. */
    void stop() {
        pinger.cancel(false);
        watchdog.cancel(false);
        client.getConnectionStateListenable().removeListener(listener);
    }

    /** @return the session timeout ZooKeeper negotiated: the owner's time to live */
    Duration ttl() {
        return Duration.ofNanos(timeoutNanos);
    }

    /** @return how long the session is valid from now ({@code 2T/3} after the newest answered request's send time), zero once ended */
    Duration remainingValidity() {
        checkClientOpen();
        return left();
    }

    /** {@link #remainingValidity()} without looking at the client: on Curator's threads too. */
    private Duration left() {
        if (status.ended()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, lastHeard.get() + timeoutNanos * 2 / 3 - System.nanoTime()));
    }

    private void ping() {
        if (status.state() != SessionState.CONNECTED && status.state() != SessionState.SUSPENDED
                || client.getState() != CuratorFrameworkState.STARTED) {
            return;
        }
        long sent = System.nanoTime();
        try {
            client.sync() // through the leader: a follower answers a read alone (see the class description)
                    .inBackground((c, event) -> {
                        if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                            failing(KeeperException.create(KeeperException.Code.get(event.getResultCode())));
                            return;
                        }
                        if (c.getZookeeperClient().getZooKeeper().getSessionId() != sessionId) {
                            // on the session's thread; once it is shut down (the session already ended), here: the loss
                            // is then ignored
                            executors.onSessionThread(() -> loss.lose(
                                    "the ZooKeeper session 0x" + Long.toHexString(sessionId) + " at " + connectString
                                            + " expired: the client is on a new session",
                                    null));
                            return;
                        }
                        lastHeard.accumulateAndGet(sent, Math::max);
                        renewals.renewed(left());
                    })
                    .forPath("/");
        } catch (Exception e) {
            // the client is closing; the deadline decides
        }
    }

    private void failing(Throwable cause) {
        long heard = lastHeard.get();
        renewals.renewalFailing(Duration.ofNanos(System.nanoTime() - heard), left(), cause);
    }

    private void checkDeadline() {
        if (checkClientOpen()) {
            return;
        }
        long silent = System.nanoTime() - lastHeard.get();
        if (silent > timeoutNanos * 2 / 3) {
            loss.lose(
                    "no answer from ZooKeeper at " + connectString + " for " + TimeUnit.NANOSECONDS.toMillis(silent)
                            + " ms, two thirds of the session timeout of " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                            + " ms: the server may expire session 0x" + Long.toHexString(sessionId),
                    null);
        }
    }

    /**
     * The application closed the {@code CuratorFramework} under the session, a shutdown-order mistake: the session
     * is lost at once, with that reason (instead of after its deadline, as if ZooKeeper were silent), and nothing is
     * registered on it any more. Curator says nothing to the session's listeners when it is closed, so this is
     * checked by the watchdog and whenever the session is asked for its state.
     *
     * @return whether the client is closed
     */
    boolean checkClientOpen() {
        if (client.getState() != CuratorFrameworkState.STOPPED) {
            return false;
        }
        loss.lose(
                "the ZooKeeper session 0x" + Long.toHexString(sessionId) + " at " + connectString + " is lost: "
                        + CLOSED_FIRST,
                null);
        return true;
    }

    private void onConnectionState(CuratorFramework c, ConnectionState newState) {
        switch (newState) {
            case SUSPENDED, READ_ONLY -> status.move(SessionState.SUSPENDED);
            case RECONNECTED, CONNECTED -> {
                long now;
                try {
                    now = c.getZookeeperClient().getZooKeeper().getSessionId();
                } catch (Exception e) {
                    now = 0;
                }
                if (now != sessionId) {
                    loss.lose(
                            "the ZooKeeper session 0x" + Long.toHexString(sessionId) + " at " + connectString
                                    + " expired: the client reconnected on a new session",
                            null);
                } else {
                    status.move(SessionState.CONNECTED);
                }
            }
            case LOST ->
                loss.lose(
                        "Curator reports the connection to ZooKeeper at " + connectString + " LOST (session 0x"
                                + Long.toHexString(sessionId) + ")",
                        null);
        }
    }
}

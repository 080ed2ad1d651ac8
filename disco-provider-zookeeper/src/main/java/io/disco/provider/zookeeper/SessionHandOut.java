package io.disco.provider.zookeeper;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * The opening of a session on a started client, up to the moment it is handed out: the client connected within
 * the connect timeout (else the message says, per server, why not: {@link ZooKeeperEndpoints}), and a request
 * answered early enough that the session has at least half its validity window left ({@code T/3} of the
 * {@code 2T/3} counted from the send time of the newest answered request, {@link SessionLiveness}).
 */
final class SessionHandOut {

    /**
     * A session ready to be handed out.
     *
     * @param sessionId the ZooKeeper session id
     * @param timeoutMs the session timeout ZooKeeper negotiated
     * @param heard the local send time of the newest answered request
     */
    record Opened(long sessionId, int timeoutMs, long heard) {}

    private SessionHandOut() {}

    /**
     * Waits for the client to connect, then for a request answered early enough.
     *
     * @throws DiscoException if ZooKeeper could not be reached in time, or no request was answered early enough
     *     within the request timeout
     */
    static Opened open(CuratorFramework client, ZooKeeperOptions options) {
        String where = client.getZookeeperClient().getCurrentConnectionString();
        try {
            if (!client.blockUntilConnected((int) options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                throw new DiscoException("ZooKeeper at " + where + " could not be reached (no connection within "
                        + options.connectTimeout().toMillis() + " ms): "
                        + ZooKeeperEndpoints.diagnose(
                                where,
                                Duration.ofMillis(Math.min(
                                        1_000,
                                        Math.max(200, options.connectTimeout().toMillis() / 2)))));
            }
            long sent = System.nanoTime();
            int first = syncWithLeader(client, options.requestTimeout().toNanos());
            if (first != KeeperException.Code.OK.intValue()) {
                throw new DiscoException("ZooKeeper at " + where + " did not pass the session's first request to its"
                        + " leader and back: " + KeeperException.Code.get(first));
            }
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long heard = heardForHandOut(client, options, zk.getSessionTimeout(), sent, where);
            zk = client.getZookeeperClient().getZooKeeper();
            return new Opened(zk.getSessionId(), zk.getSessionTimeout(), heard);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while connecting to ZooKeeper at " + where, e);
        } catch (DiscoException e) {
            throw e;
        } catch (Exception e) {
            throw new DiscoException("ZooKeeper at " + where + " failed: " + e, e);
        }
    }

    /**
     * Sends a {@code sync}, which a follower passes to the leader and back (a read it would answer alone, also while
     * the leader no longer hears it), and waits for its answer.
     *
     * @return the answer's result code
     * @throws java.util.concurrent.TimeoutException if no answer came within {@code timeoutNanos}
     */
    private static int syncWithLeader(CuratorFramework client, long timeoutNanos) throws Exception {
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        client.sync()
                .inBackground((c, event) -> answer.complete(event.getResultCode()))
                .forPath("/");
        return answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A new owner is handed out with at least half its validity window left: the window is {@code 2T/3} from
     * the send time of the newest answered request, so at least {@code T/3}. When the opening request's answer
     * came later than that (a cold JVM's first request, a slow link), one more request is sent, its send time
     * starting the window again, until the session is valid for that long, within the request timeout.
     *
     * @param sent the send time of the opening request, answered
     * @return the send time of the newest answered request, with at least {@code T/3} of the window left
     * @throws DiscoException if no request was answered early enough within the request timeout
     */
    private static long heardForHandOut(
            CuratorFramework client, ZooKeeperOptions options, int timeoutMs, long sent, String where)
            throws InterruptedException {
        long window = TimeUnit.MILLISECONDS.toNanos(timeoutMs) * 2 / 3;
        long threshold = window / 2;
        long start = System.nanoTime();
        long grantedWith = sent + window - start;
        if (grantedWith >= threshold) {
            return sent;
        }
        long deadline = start + options.requestTimeout().toNanos();
        long heard = sent;
        int asked = 0;
        String last = "";
        while (true) {
            long now = System.nanoTime();
            if (heard + window - now >= threshold) {
                return heard;
            }
            if (deadline - now <= 0) {
                throw new DiscoException("the ZooKeeper session at " + where + " opened with "
                        + TimeUnit.NANOSECONDS.toMillis(Math.max(0, grantedWith)) + " ms of its "
                        + TimeUnit.NANOSECONDS.toMillis(window)
                        + " ms validity (2/3 of the session timeout of "
                        + timeoutMs + " ms, counted from when its first request was sent) left, under the "
                        + TimeUnit.NANOSECONDS.toMillis(threshold)
                        + " ms (half of it) a new session is handed out with, and no"
                        + " request was answered early enough within the request timeout of "
                        + options.requestTimeout().toMillis()
                        + " ms (" + asked + " sent" + last + "): not handed out");
            }
            long ask = System.nanoTime();
            asked++;
            try {
                int code = syncWithLeader(client, deadline - ask);
                if (code == KeeperException.Code.OK.intValue()) {
                    heard = ask;
                } else {
                    last = "; the last answered " + KeeperException.Code.get(code);
                    TimeUnit.NANOSECONDS.sleep(
                            Math.max(0, Math.min(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime())));
                }
            } catch (java.util.concurrent.TimeoutException e) {
                last = "; the last unanswered";
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = "; the last failed: " + e;
            }
        }
    }
}

package io.disco.chaos;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.DrainTimeoutException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.IssuedBound;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.zookeeper.ZooKeeperIssuedBound;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The guarded resource, in a process of its own: integer registers, each behind its own guard (a
 * {@link KeyedGuard}: one register for most workloads, one per slot for the semaphore). Every
 * operation is admitted in token order and recorded, with {@code System.nanoTime()}, in its history:
 * The guard confirms each new token with etcd ({@link EtcdIssuedBound}, reading the cluster
 * directly, not through an owner's proxy): a token nobody issued is refused ({@code unissued}, 400),
 * and a new token that etcd cannot confirm in time ({@code unconfirmed}, 503).
 * <ul>
 *   <li>{@code GET /read?key=K&owner=O} answers the register's value;</li>
 *   <li>{@code POST /write?key=K&owner=O&expect=V&value=N} sets the register to {@code N} (the owner
 *       read {@code V} before); the history keeps both and the value it replaced, so a lost update shows;</li>
 *   <li>{@code GET /keys} answers the registers seen so far, one per line (for the {@link Hostile} owner);</li>
 *   <li>{@code GET /history} answers the history, one operation per line:
 *       {@code nanos op key owner token outcome expect value previous} (see {@link Observations.Op}).</li>
 * </ul>
 * With {@code --broken} the guard is bypassed (every token accepted): the suite's checkers must then
 * fail, which is how the suite proves they can. Prints {@code LISTENING <port>} once it serves.
 * Arguments: {@code --etcd <endpoints>} (comma-separated) or {@code --zookeeper <connect string>} (the bound
 * is then {@code ZooKeeperIssuedBound}) or {@code --redis <sentinel URI>} ({@link RedisTokenBound}), and
 * {@code --broken}.
 */
public final class ResourceMain {

    private final KeyedGuard guards;
    private final boolean broken;
    private final Object lock = new Object();
    private final List<String> history = new ArrayList<>(); // guarded by lock
    private final Map<String, Long> values = new HashMap<>(); // guarded by lock

    private ResourceMain(boolean broken, KeyedGuard guards) {
        this.broken = broken;
        this.guards = guards;
    }

    public static void main(String[] args) throws IOException {
        List<String> list = List.of(args);
        boolean broken = list.contains("--broken");
        int at = list.indexOf("--etcd");
        int zk = list.indexOf("--zookeeper");
        int redis = list.indexOf("--redis");
        if ((at >= 0 ? 1 : 0) + (zk >= 0 ? 1 : 0) + (redis >= 0 ? 1 : 0) != 1
                || Math.max(Math.max(at, zk), redis) + 1 >= list.size()) {
            throw new IllegalArgumentException("usage: ResourceMain --etcd <endpoints> | --zookeeper <connect string>"
                    + " | --redis <sentinel URI> [--broken]");
        }
        IssuedBound issued;
        Duration boundTimeout = Duration.ofSeconds(1);
        if (redis >= 0) {
            issued = RedisTokenBound.of(list.get(redis + 1));
            boundTimeout = Duration.ofSeconds(3); // three sentinels, then a scan of the primary's token records
        } else if (at >= 0) {
            Client client = Client.builder()
                    .endpoints(list.get(at + 1).split(","))
                    .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(1)))
                    .build(); // for the life of the process
            issued = EtcdIssuedBound.of(client);
        } else {
            CuratorFramework client = CuratorFrameworkFactory.newClient(
                    list.get(zk + 1), 10_000, 2_000, new RetryNTimes(3, 100)); // for the life of the process
            client.start();
            issued = ZooKeeperIssuedBound.of(client);
        }
        KeyedGuard guards =
                Guard.builder().issuedBound(issued).boundTimeout(boundTimeout).buildKeyed();
        ResourceMain r = new ResourceMain(broken, guards);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", r::handle);
        server.start();
        System.out.println("LISTENING " + server.getAddress().getPort() + (broken ? " (broken: tokens ignored)" : ""));
        System.out.flush();
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (path.equals("/history")) {
            String body;
            synchronized (lock) {
                body = String.join("\n", history) + "\n";
            }
            answer(ex, 200, body);
            return;
        }
        if (path.equals("/keys")) {
            String body;
            synchronized (lock) {
                body = String.join("\n", values.keySet()) + "\n";
            }
            answer(ex, 200, body);
            return;
        }
        String key = param(ex.getRequestURI(), "key");
        String owner = param(ex.getRequestURI(), "owner");
        FencingToken token;
        try {
            token = FencingHttp.parseHeader(ex.getRequestHeaders().getOrDefault(FencingHttp.HEADER, List.of()));
        } catch (MalformedTokenException e) {
            answer(ex, 400, e.getMessage());
            return;
        }
        boolean write = path.equals("/write");
        String op = write ? "W" : "R";
        long now;
        try (Guard.Admission a = broken ? null : guards.forKey(key).admit(token)) {
            synchronized (lock) {
                long previous = values.getOrDefault(key, 0L);
                now = write ? Long.parseLong(param(ex.getRequestURI(), "value")) : previous;
                values.put(key, now);
                history.add(line(
                        op, key, owner, token, "ok", write ? param(ex.getRequestURI(), "expect") : "-", now, previous));
            }
        } catch (TokenStaleException | DrainTimeoutException | TokenNotIssuedException | BoundUnavailableException e) {
            Refusal refusal = Refusal.of(e);
            record(op, key, owner, token, refusal.outcome);
            answer(ex, refusal.status, e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer(ex, 503, "interrupted");
            return;
        }
        answer(ex, 200, Long.toString(now));
    }

    /** A request the guard refused: the outcome its history records, and the status it is answered. */
    private enum Refusal {
        STALE(TokenStaleException.class, "stale", 409),
        DRAIN(DrainTimeoutException.class, "drain", 503),
        NOT_ISSUED(TokenNotIssuedException.class, "unissued", 400),
        UNCONFIRMED(BoundUnavailableException.class, "unconfirmed", 503);

        private final Class<? extends DiscoException> type;
        final String outcome;
        final int status;

        Refusal(Class<? extends DiscoException> type, String outcome, int status) {
            this.type = type;
            this.outcome = outcome;
            this.status = status;
        }

        static Refusal of(DiscoException e) {
            for (Refusal r : values()) {
                if (r.type.isInstance(e)) {
                    return r;
                }
            }
            throw new IllegalArgumentException("not a refusal of the guard: " + e);
        }
    }

    private void record(String op, String key, String owner, FencingToken token, String outcome) {
        synchronized (lock) {
            history.add(line(op, key, owner, token, outcome, "-", "-", "-"));
        }
    }

    private static String line(
            String op,
            String key,
            String owner,
            FencingToken token,
            String outcome,
            Object expect,
            Object value,
            Object previous) {
        return System.nanoTime() + " " + op + " " + key + " " + owner + " " + token.value() + " " + outcome + " "
                + expect + " " + value + " " + previous;
    }

    private static String param(URI uri, String name) {
        String q = uri.getRawQuery();
        if (q != null) {
            for (String kv : q.split("&")) {
                int i = kv.indexOf('=');
                if (i > 0 && kv.substring(0, i).equals(name)) {
                    return URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8);
                }
            }
        }
        return "-";
    }

    private static void answer(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}

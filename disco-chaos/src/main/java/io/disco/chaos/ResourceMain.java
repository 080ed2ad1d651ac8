package io.disco.chaos;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.DrainTimeoutException;
import io.disco.fencing.guard.Guard;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * The guarded resource, in a process of its own: one integer register behind a {@link Guard}. Every
 * operation is admitted in token order and recorded, with {@code System.nanoTime()}, in its history:
 * <ul>
 *   <li>{@code GET /read?owner=O} answers the value;</li>
 *   <li>{@code POST /write?owner=O&expect=V&value=N} sets the register to {@code N} (the owner read
 *       {@code V} before); the history keeps both and the value it replaced, so a lost update shows;</li>
 *   <li>{@code GET /history} answers the history, one operation per line:
 *       {@code nanos op owner token outcome expect value previous}.</li>
 * </ul>
 * With {@code --broken} the guard is bypassed (every token accepted): the suite's checkers must then
 * fail, which is how the suite proves they can. Prints {@code LISTENING <port>} once it serves.
 */
public final class ResourceMain {

    private final Guard guard = Guard.create();
    private final boolean broken;
    private final List<String> history = new ArrayList<>(); // guarded by this
    private long value; // guarded by this

    private ResourceMain(boolean broken) {
        this.broken = broken;
    }

    public static void main(String[] args) throws IOException {
        boolean broken = List.of(args).contains("--broken");
        ResourceMain r = new ResourceMain(broken);
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
            synchronized (this) {
                body = String.join("\n", history) + "\n";
            }
            answer(ex, 200, body);
            return;
        }
        String owner = param(ex.getRequestURI(), "owner");
        FencingToken token;
        try {
            token = FencingHttp.parseHeader(ex.getRequestHeaders().getOrDefault(FencingHttp.HEADER, List.of()));
        } catch (MalformedTokenException e) {
            answer(ex, 400, e.getMessage());
            return;
        }
        boolean write = path.equals("/write");
        try (Guard.Admission a = broken ? null : guard.admit(token)) {
            synchronized (this) {
                long previous = value;
                if (write) {
                    value = Long.parseLong(param(ex.getRequestURI(), "value"));
                    history.add(System.nanoTime() + " W " + owner + " " + token.value() + " ok "
                            + param(ex.getRequestURI(), "expect") + " " + value + " " + previous);
                } else {
                    history.add(System.nanoTime() + " R " + owner + " " + token.value() + " ok - " + value + " " + previous);
                }
            }
            answer(ex, 200, Long.toString(currentValue()));
        } catch (TokenStaleException e) {
            record(write ? "W" : "R", owner, token, "stale");
            answer(ex, 409, e.getMessage());
        } catch (DrainTimeoutException e) {
            record(write ? "W" : "R", owner, token, "drain");
            answer(ex, 503, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer(ex, 503, "interrupted");
        }
    }

    private synchronized long currentValue() {
        return value;
    }

    private synchronized void record(String op, String owner, FencingToken token, String outcome) {
        history.add(System.nanoTime() + " " + op + " " + owner + " " + token.value() + " " + outcome + " - - -");
    }

    private static String param(URI uri, String name) {
        String q = uri.getQuery();
        if (q != null) {
            for (String kv : q.split("&")) {
                int i = kv.indexOf('=');
                if (i > 0 && kv.substring(0, i).equals(name)) {
                    return kv.substring(i + 1);
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

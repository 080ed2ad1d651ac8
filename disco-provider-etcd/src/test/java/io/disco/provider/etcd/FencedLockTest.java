package io.disco.provider.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.disco.client.FencedLocks;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import io.disco.testservers.ThreadPerTask;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@link FencedLock} view over the etcd lock: threads of this JVM and a second process contend. The
 * in-process contract (owners, the holding thread, withdrawal) is {@code FencedLockContract}, run by
 * {@link EtcdFencedLockContractTest}.
 */
class FencedLockTest {

    /** A thread per task: these tasks block. */
    private static final java.util.concurrent.Executor THREADS = ThreadPerTask.DAEMON;

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    @Test
    void threadsOfThisJvmAndASecondProcessExcludeEachOtherWithStrictlyIncreasingTokens() throws Exception {
        String prefix = Etcd.uniquePrefix("fenced-lock");
        AtomicLong occupant = new AtomicLong(); // the token inside the critical section, 0 when empty
        List<Long> entries = new CopyOnWriteArrayList<>();
        List<String> violations = new CopyOnWriteArrayList<>();
        HttpServer resource = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        resource.setExecutor(Executors.newCachedThreadPool());
        resource.createContext("/", exchange -> {
            String q = exchange.getRequestURI().getQuery();
            long token = Long.parseLong(q.substring(q.indexOf('=') + 1));
            if (exchange.getRequestURI().getPath().equals("/enter")) {
                if (!occupant.compareAndSet(0, token)) {
                    violations.add(token + " entered while " + occupant.get() + " was inside");
                }
                entries.add(token);
            } else if (!occupant.compareAndSet(token, 0)) {
                violations.add(token + " left while " + occupant.get() + " was inside");
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        resource.start();
        URI base = URI.create("http://127.0.0.1:" + resource.getAddress().getPort());
        Process child = new ProcessBuilder(
                        ProcessHandle.current().info().command().orElseThrow(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LockViewChild.class.getName(),
                        String.join(",", ETCD.cluster().endpoints()),
                        prefix,
                        base.toString(),
                        "15")
                .redirectErrorStream(true)
                .start();
        CompletableFuture<String> childOut = CompletableFuture.supplyAsync(
                () -> new BufferedReader(new InputStreamReader(child.getInputStream(), UTF_8))
                        .lines()
                        .reduce("", (a, b) -> a + b + "\n"),
                THREADS);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        HttpClient http = HttpClient.newHttpClient();
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                LockService service = session.newLock(prefix)) {
            FencedLock view = FencedLocks.of(service);
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                workers.add(CompletableFuture.runAsync(
                        () -> {
                            for (int i = 0; i < 10; i++) {
                                view.lock();
                                try {
                                    long token = view.token().value();
                                    LockViewChild.call(http, base.resolve("/enter?token=" + token));
                                    view.lock(); // reentrant: same hold, same token
                                    assertEquals(2, view.getHoldCount());
                                    assertEquals(token, view.token().value());
                                    view.unlock();
                                    LockViewChild.call(http, base.resolve("/exit?token=" + token));
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                } finally {
                                    view.unlock();
                                }
                            }
                        },
                        threads));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the second process finished");
            // what the child printed, less its log lines (the etcd version warning, on 3.4.23)
            String printed = childOut.get(10, TimeUnit.SECONDS)
                    .lines()
                    .filter(l -> !l.matches("^[0-9:.]+ \\[.*\\] (WARN|INFO) .*"))
                    .reduce("", (a, b) -> a + b + "\n");
            assertEquals("DONE\n", printed);
        } finally {
            threads.shutdownNow();
            child.destroyForcibly();
            resource.stop(0);
        }
        assertEquals(List.of(), violations);
        assertEquals(55, entries.size());
        for (int i = 1; i < entries.size(); i++) {
            assertTrue(entries.get(i) > entries.get(i - 1), "tokens strictly increase across owners: " + entries);
        }
        assertTrue(Etcd.keysUnder(ETCD.client(), prefix).isEmpty());
    }
}

package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.DiscoException;
import io.disco.lock.FencedLock;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd down, then back (issue 45, items 3 and 6), with the member really stopped and restarted: while
 * the client has no lease, {@code lock()} throws within the client's owner wait (by default the TTL)
 * with the endpoint and the cause in its message, and {@code status()} answers at once while 50
 * threads are in {@code lock()}; once etcd answers again the client is UP within 2 s and says so once
 * at INFO, with the new lease and how long it had none.
 */
class EtcdOutageTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** TTL 2 s, so the default owner wait is 2 s; each request waits at most 1 s. */
    private static EtcdOptions options() {
        return Etcd.options(2, 1);
    }

    /** The owner wait, plus an open attempt in progress (the request timeout), plus a loaded machine's slack. */
    private static final long BOUND_MS = 2_000 + 1_000 + 3_000;

    @Test
    void lockWhileEtcdIsDownThrowsWithinTheBoundAndTheClientIsUpSoonAfterEtcdAnswers() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String hostPort = URI.create(etcd.endpoint(0)).getAuthority();
        String name = uniquePrefix("outage");
        ExecutorService threads = Executors.newFixedThreadPool(50);
        CapturedStderr stderr = CapturedStderr.start();
        try (Client client = Etcd.client(etcd);
                Disco disco = EtcdProvider.disco(client, options())) {
            FencedLock lock = disco.lock(name);
            lock.lock();
            lock.unlock();

            etcd.stopMember(0);
            long stopped = System.nanoTime();
            await().atMost(Duration.ofSeconds(15)).until(() -> disco.status().state() == DiscoStatus.State.HEALING);
            System.out.printf(
                    "HEALING %d ms after etcd stopped: %s%n",
                    (System.nanoTime() - stopped) / 1_000_000, disco.status());

            // 50 request threads call lock(), as the README's first example did.
            List<CompletableFuture<Long>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                String n = name + "-" + (i % 5);
                calls.add(CompletableFuture.supplyAsync(
                        () -> {
                            long start = System.nanoTime();
                            try {
                                disco.lock(n).lock();
                            } catch (DiscoException e) {
                                return System.nanoTime() - start;
                            }
                            throw new AssertionError("lock() returned while etcd was down");
                        },
                        threads));
            }
            // status() answers at once while they wait, every time.
            long slowest = 0;
            for (int i = 0; i < 20; i++) {
                long t = System.nanoTime();
                DiscoStatus s = disco.status();
                slowest = Math.max(slowest, System.nanoTime() - t);
                assertEquals(DiscoStatus.State.HEALING, s.state(), s.toString());
                assertTrue(s.lastProblem().isPresent(), "says why: " + s);
            }
            System.out.printf("status() while 50 threads were in lock(): slowest of 20 calls %.2f ms%n", slowest / 1e6);
            assertTrue(slowest < TimeUnit.MILLISECONDS.toNanos(200), "status() took " + slowest / 1_000_000 + " ms");

            long longest = 0;
            for (CompletableFuture<Long> c : calls) {
                longest = Math.max(longest, c.get(BOUND_MS + 2_000, TimeUnit.MILLISECONDS));
            }
            System.out.printf(
                    "lock() with etcd down: the longest of 50 threw after %d ms (owner wait 2000 ms)%n",
                    longest / 1_000_000);
            assertTrue(
                    longest < TimeUnit.MILLISECONDS.toNanos(BOUND_MS),
                    "the longest lock() took " + longest / 1_000_000 + " ms");
            Throwable thrown = failure(() -> disco.lock(name).lock());
            assertInstanceOf(DiscoException.class, thrown);
            System.out.println("lock() with etcd down throws: " + thrown);
            assertTrue(thrown.getMessage().contains(hostPort), "names the endpoint: " + thrown.getMessage());
            assertTrue(
                    thrown.getMessage().contains("refused"), "says the connection is refused: " + thrown.getMessage());
            // tryLock(timeout) keeps its own bound: false, or the same failure, never a hang
            assertTrue(CompletableFuture.supplyAsync(
                                    () -> {
                                        try {
                                            return disco.lock(name).tryLock(300, TimeUnit.MILLISECONDS);
                                        } catch (DiscoException e) {
                                            return false;
                                        } catch (InterruptedException e) {
                                            throw new AssertionError(e);
                                        }
                                    },
                                    threads)
                            .get(5, TimeUnit.SECONDS)
                    == Boolean.FALSE);

            long answering = startAndWaitUntilItAnswers(etcd);
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> disco.status().state() == DiscoStatus.State.UP);
            long upAfter = System.nanoTime() - answering;
            System.out.printf("UP %d ms after etcd answered again%n", upAfter / 1_000_000);
            assertTrue(upAfter < TimeUnit.SECONDS.toNanos(2), "UP " + upAfter / 1_000_000 + " ms after etcd answered");
            String lease = disco.status().owner().orElseThrow();
            assertTrue(CompletableFuture.supplyAsync(
                            () -> {
                                FencedLock l = disco.lock(name);
                                l.lock();
                                l.unlock();
                                return true;
                            },
                            threads)
                    .get(10, TimeUnit.SECONDS));

            String log = stderr.log();
            List<String> back = log.lines()
                    .filter(l -> l.contains("INFO") && l.contains("owner again"))
                    .toList();
            System.out.println("logged: " + back);
            assertEquals(1, back.size(), "one INFO line when the owner is back:\n" + log);
            assertTrue(back.get(0).contains(lease), "names the new lease: " + back.get(0));
            assertTrue(back.get(0).matches(".*without one for \\d+ ms.*"), "says how long it had none: " + back.get(0));
        } finally {
            stderr.close();
            threads.shutdownNow();
        }
    }

    /**
     * Recovery does not slow down with the outage's length: after 15 s down (long enough for gRPC's
     * reconnect backoff and the client's own to have grown), UP within 2 s of etcd answering again.
     */
    @Test
    void upWithinTwoSecondsOfEtcdAnsweringAfterALongOutage() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        try (Client client = Etcd.client(etcd);
                Disco disco = EtcdProvider.disco(client, options())) {
            etcd.stopMember(0);
            long stopped = System.nanoTime();
            await().atMost(Duration.ofSeconds(15)).until(() -> disco.status().state() == DiscoStatus.State.HEALING);
            // the outage itself: 15 s of etcd being down is the fault, not a wait for an event
            await().pollDelay(Duration.ofSeconds(15))
                    .atMost(Duration.ofSeconds(16))
                    .until(() -> System.nanoTime() - stopped >= TimeUnit.SECONDS.toNanos(15));
            long answering = startAndWaitUntilItAnswers(etcd);
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> disco.status().state() == DiscoStatus.State.UP);
            long upAfter = System.nanoTime() - answering;
            System.out.printf(
                    "after a %d s outage: UP %d ms after etcd answered again%n",
                    (answering - stopped) / 1_000_000_000, upAfter / 1_000_000);
            assertTrue(upAfter < TimeUnit.SECONDS.toNanos(2), "UP " + upAfter / 1_000_000 + " ms after etcd answered");
        }
    }

    /** Starts the stopped member again. @return when it answered a read again */
    private static long startAndWaitUntilItAnswers(EtcdCluster etcd) {
        etcd.startMember(0);
        try (Client probe = Etcd.client(etcd)) {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .ignoreExceptions()
                    .until(() -> probe.getKVClient().get(Etcd.bytes("/")).get(200, TimeUnit.MILLISECONDS) != null);
            return System.nanoTime();
        }
    }

    private static Throwable failure(Runnable r) throws Exception {
        try {
            CompletableFuture.runAsync(r, Executors.newSingleThreadExecutor()).get(BOUND_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("did not fail");
    }
}

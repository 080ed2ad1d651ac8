package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.IssuedBound;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.RequestFlood;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The guard's reads of etcd's revision ({@link EtcdIssuedBound}) are bounded whatever the request rate, against a
 * real etcd, every read counted on the wire ({@link RpcCounter} on the bound's own client, {@code KV/Range}):
 * a flood of requests with forged tokens costs at most one linearizable read per read interval (default
 * {@value #INTERVAL_MS} ms), a real new owner's first request is admitted during the flood within the interval and
 * one read, real hand-overs without forged traffic are not slowed by the interval, an idle guard reads nothing, and
 * with etcd down the flood costs one attempt per interval while every request fails in its bound.
 */
class BoundReadRateEtcdTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    /** The guard's default read interval ({@code Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS}). */
    private static final long INTERVAL_MS = 50;

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int FLOODERS = 100;

    /** The bound's reads, timed: the longest answer is the "one read" of the new owner's bound. */
    static final class Timed implements IssuedBound {
        final AtomicLong longestNanos = new AtomicLong();
        private final IssuedBound inner;

        Timed(IssuedBound inner) {
            this.inner = inner;
        }

        @Override
        public CompletionStage<FencingToken> current() {
            long start = System.nanoTime();
            return inner.current()
                    .whenComplete((r, e) -> longestNanos.accumulateAndGet(System.nanoTime() - start, Math::max));
        }
    }

    /**
     * {@code FLOODERS} threads sending {@code guard} forged tokens until closed: far above {@code above} (anything etcd
     * issues during the test), a different one per thread, one of them 2^63-1.
     */
    private static RequestFlood flood(Guard guard, long above) {
        return RequestFlood.start(
                "forger",
                FLOODERS,
                i -> {
                    FencingToken forged = FencingToken.of(i == 0 ? Long.MAX_VALUE : above + 1_000_000_000L + i);
                    guard.check(forged);
                    throw new AssertionError("forged token " + forged + " admitted");
                },
                List.of(TokenNotIssuedException.class, BoundUnavailableException.class));
    }

    /** What a test does during its flood, once the flood is at full strength. */
    private interface DuringFlood {
        void run() throws Exception;
    }

    /** A flood that ran for a second and was closed: its counts, the requests refused before it closed, how long it ran. */
    private record Flooded(RequestFlood flood, long requests, long elapsedNanos) {}

    /**
     * Floods {@code guard} ({@link #flood}); once every forger had an answer runs {@code during}, lets the flood run
     * until a second after {@code startNanos}, and closes it. Every forged token was refused.
     */
    private static Flooded floodForASecond(Guard guard, long above, long startNanos, DuringFlood during)
            throws Exception {
        try (RequestFlood flood = flood(guard, above)) {
            assertTrue(flood.awaitEveryThreadAnswered(Duration.ofSeconds(30)), "every forger answered once");
            during.run();
            Awaitility.await()
                    .atMost(WAIT)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> System.nanoTime() - startNanos >= TimeUnit.SECONDS.toNanos(1));
            long requests = flood.refused();
            flood.close();
            long elapsed = System.nanoTime() - startNanos;
            assertEquals(List.of(), flood.unexpected(), "every forged token refused");
            return new Flooded(flood, requests, elapsed);
        }
    }

    private static Client countedClient(List<String> endpoints, RpcCounter counter, Duration deadline) {
        return Client.builder()
                .endpoints(endpoints.toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(deadline), counter)
                .build();
    }

    private static long reads(RpcCounter counter) {
        return counter.calls("KV/Range");
    }

    private static long maxReads(long elapsedNanos) {
        return (long) Math.ceil(elapsedNanos / (double) TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS)) + 1;
    }

    @Test
    void aFloodOfForgedTokensCostsAtMostOneReadPerIntervalAndARealNewOwnerStillGetsInWithinTheIntervalAndOneRead()
            throws Exception {
        String name = Etcd.uniquePrefix("bound-flood");
        RpcCounter counter = new RpcCounter();
        try (Client boundClient = countedClient(ETCD.cluster().endpoints(), counter, Duration.ofSeconds(5));
                LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Timed bound = new Timed(EtcdIssuedBound.of(boundClient));
            Guard guard = Guard.builder().issuedBound(bound).build();
            Grant first = lock.lock(WAIT);
            guard.admit(first.token()).close(); // the current owner: one read, then the mark
            long revision = Etcd.revision(ETCD.client());

            long before = reads(counter);
            long start = System.nanoTime();
            List<Long> newOwnerMillis = new ArrayList<>();
            AtomicReference<FencingToken> owner = new AtomicReference<>(first.token());
            Flooded f = floodForASecond(guard, revision, start, () -> {
                for (int i = 0; i < 5; i++) { // real hand-overs during the flood
                    lock.unlock();
                    owner.set(lock.lock(WAIT).token());
                    long s = System.nanoTime();
                    guard.admit(owner.get()).close();
                    newOwnerMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s));
                    assertEquals(Optional.of(owner.get()), guard.highWater());
                }
            });
            long elapsed = f.elapsedNanos();
            long flooded = f.requests();
            assertEquals(
                    0,
                    f.flood().count(BoundUnavailableException.class),
                    "etcd was up: no request refused as unconfirmable");
            assertTrue(
                    f.flood().longestNanos() < TimeUnit.SECONDS.toNanos(3),
                    "a forged request waits about one interval and one read: "
                            + f.flood().longestNanos() / 1e6 + " ms");
            long made = reads(counter) - before;
            double seconds = elapsed / 1e9;
            System.out.printf(
                    "[bound-flood] %d forged requests from %d threads in %.2f s: %d etcd reads (%.1f/s);"
                            + " new owners admitted in %s ms, longest read %.1f ms%n",
                    flooded, FLOODERS, seconds, made, made / seconds, newOwnerMillis, bound.longestNanos.get() / 1e6);
            assertTrue(flooded >= FLOODERS, "the flood ran: " + flooded);
            assertTrue(
                    made <= maxReads(elapsed),
                    made + " reads in " + elapsed / 1_000_000 + " ms: at most one per " + INTERVAL_MS
                            + " ms (+1) whatever the request rate (" + flooded + " forged requests)");
            long oneRead = TimeUnit.NANOSECONDS.toMillis(bound.longestNanos.get());
            for (long ms : newOwnerMillis) {
                // the interval and one read, and room for a busy 2-core machine's scheduling
                assertTrue(
                        ms <= INTERVAL_MS + oneRead + 100,
                        "a real new owner admitted in " + ms + " ms; interval " + INTERVAL_MS + " ms, longest read "
                                + oneRead + " ms: " + newOwnerMillis);
            }
            assertEquals(Optional.of(owner.get()), guard.highWater(), "no forged token moved the mark");

            long afterFlood = reads(counter);
            Awaitility.await()
                    .during(Duration.ofMillis(300))
                    .atMost(WAIT)
                    .until(() -> reads(counter) == afterFlood); // idle again: no read
            lock.unlock();
        }
    }

    @Test
    void realHandOversWithoutForgedTokensAreNotHeldBackByTheInterval() throws Exception {
        String name = Etcd.uniquePrefix("bound-handover");
        RpcCounter counter = new RpcCounter();
        try (Client boundClient = countedClient(ETCD.cluster().endpoints(), counter, Duration.ofSeconds(5));
                LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Guard guard =
                    Guard.builder().issuedBound(EtcdIssuedBound.of(boundClient)).build();
            int owners = 30;
            long[] micros = new long[owners];
            long before = reads(counter);
            for (int i = 0; i < owners; i++) {
                Grant g = lock.lock(WAIT);
                long s = System.nanoTime();
                guard.admit(g.token()).close(); // each owner's first request needs a read: its token is new
                micros[i] = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - s);
                guard.admit(g.token()).close(); // its next request: no read
                lock.unlock();
            }
            long made = reads(counter) - before;
            Arrays.sort(micros);
            long median = micros[owners / 2];
            System.out.printf(
                    "[bound-handover] %d owners one after another: %d etcd reads, first request admitted in"
                            + " %d us (median), %d us (longest)%n",
                    owners, made, median, micros[owners - 1]);
            assertEquals(owners, made, "one read per new owner, never per request");
            assertTrue(
                    median < TimeUnit.MILLISECONDS.toMicros(INTERVAL_MS) / 2,
                    "a read that confirmed a real token does not delay the next one: median " + median + " us");
        }
    }

    @Test
    void anIdleGuardReadsNothing() throws Exception {
        RpcCounter counter = new RpcCounter();
        try (Client boundClient = countedClient(ETCD.cluster().endpoints(), counter, Duration.ofSeconds(5))) {
            long revision = Etcd.revision(ETCD.client());
            Guard guard =
                    Guard.builder().issuedBound(EtcdIssuedBound.of(boundClient)).build();
            Awaitility.await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> reads(counter) == 0);
            guard.admit(FencingToken.of(revision)).close();
            assertEquals(1, reads(counter));
            for (int i = 0; i < 1000; i++) {
                guard.admit(FencingToken.of(revision)).close(); // the owner writing again
            }
            Awaitility.await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> reads(counter) == 1);
        }
    }

    @Test
    void withEtcdDownAFloodCostsOneAttemptPerIntervalAndEveryRequestFailsWithinItsBound() throws Exception {
        RpcCounter counter = new RpcCounter();
        Duration boundTimeout = Duration.ofMillis(500);
        try (EtcdCluster etcd = EtcdCluster.start(1);
                Client boundClient = countedClient(etcd.endpoints(), counter, boundTimeout)) {
            Guard guard = Guard.builder()
                    .issuedBound(EtcdIssuedBound.of(boundClient))
                    .boundTimeout(boundTimeout)
                    .build();
            long revision = Etcd.revision(boundClient);
            guard.admit(FencingToken.of(revision)).close();
            etcd.stopMember(0);

            long before = reads(counter);
            Flooded f = floodForASecond(guard, revision, System.nanoTime(), () -> {});
            long elapsed = f.elapsedNanos();
            long refused = f.flood().count(BoundUnavailableException.class);
            assertEquals(0, f.flood().count(TokenNotIssuedException.class), "nothing decided without an answer");
            // a request waits at most for the read in flight, the interval, and its own read, each read bounded
            long bound = 2 * boundTimeout.toMillis() + INTERVAL_MS + 1000;
            assertTrue(
                    f.flood().longestNanos() <= TimeUnit.MILLISECONDS.toNanos(bound),
                    "every request answered" + " (503) within " + bound + " ms: the longest took "
                            + f.flood().longestNanos() / 1e6 + " ms");
            long attempts = reads(counter) - before;
            System.out.printf(
                    "[bound-down] etcd stopped: %d requests refused (unavailable) in %.2f s, %d read attempts%n",
                    refused, elapsed / 1e9, attempts);
            assertTrue(refused >= FLOODERS, "every forger was answered: " + refused);
            assertTrue(
                    attempts <= maxReads(elapsed),
                    attempts + " read attempts in " + elapsed / 1_000_000 + " ms while etcd was down: at most one per "
                            + INTERVAL_MS + " ms (+1)");

            etcd.startMember(0);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> boundClient
                                    .getKVClient()
                                    .put(Etcd.bytes("/test/bound-down/next"), Etcd.bytes("x"))
                                    .get(1, TimeUnit.SECONDS)
                            != null);
            long next = Etcd.revision(boundClient); // a revision issued after etcd came back
            guard.admit(FencingToken.of(next)).close(); // a new owner is confirmed again
            assertEquals(Optional.of(FencingToken.of(next)), guard.highWater());
        }
    }

    @Test
    void readsThatFailAtOnceCostOneAttemptPerIntervalAndEveryRequestIsAnsweredUnavailable() throws Exception {
        RpcCounter counter = new RpcCounter();
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            etcd.etcdctl("user", "add", "nobody:nobody-pw"); // may read nothing: every read is refused at once
            etcd.enableAuth("root-pw");
            try (Client nobody = Client.builder()
                    .endpoints(etcd.endpoints().toArray(String[]::new))
                    .user(Etcd.bytes("nobody"))
                    .password(Etcd.bytes("nobody-pw"))
                    .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)), counter)
                    .build()) {
                Guard guard = Guard.builder()
                        .issuedBound(EtcdIssuedBound.of(nobody))
                        .initialToken(FencingToken.of(7))
                        .build();
                Flooded f = floodForASecond(guard, 7, System.nanoTime(), () -> {});
                long elapsed = f.elapsedNanos();
                long refused = f.flood().count(BoundUnavailableException.class);
                assertEquals(0, f.flood().count(TokenNotIssuedException.class), "nothing decided without an answer");
                assertTrue(
                        f.flood().longestNanos() < TimeUnit.SECONDS.toNanos(3),
                        "answered within about the" + " interval and one read: the longest took "
                                + f.flood().longestNanos() / 1e6 + " ms");
                long attempts = counter.calls("KV/Range");
                System.out.printf(
                        "[bound-denied] every read refused by etcd: %d requests answered unavailable in %.2f s,"
                                + " %d read attempts (%.1f/s)%n",
                        refused, elapsed / 1e9, attempts, attempts / (elapsed / 1e9));
                assertTrue(refused >= FLOODERS, "every forger was answered: " + refused);
                assertTrue(
                        attempts <= maxReads(elapsed),
                        attempts + " read attempts in " + elapsed / 1_000_000 + " ms: at most one per " + INTERVAL_MS
                                + " ms (+1)");
                assertEquals(Optional.of(FencingToken.of(7)), guard.highWater());
            }
        }
    }
}

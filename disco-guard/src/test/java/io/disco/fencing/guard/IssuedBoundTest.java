package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.POISON;
import static io.disco.fencing.guard.Tokens.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard's bound on tokens, with an {@link IssuedBound} whose reads the test answers by hand (the
 * tests against a real etcd are {@code IssuedBoundEtcdTest} in disco-provider-etcd): a token nobody
 * issued never moves the mark, the confirmation is one read shared by concurrent requests, an
 * unanswered read refuses only the new token, and a poisoned mark can be lowered, never below the
 * revision.
 */
class IssuedBoundTest {

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** A coordination service whose reads wait until the test answers them. */
    static final class HandBound implements IssuedBound {
        final List<CompletableFuture<FencingToken>> reads = new CopyOnWriteArrayList<>();

        @Override
        public CompletionStage<FencingToken> current() {
            CompletableFuture<FencingToken> f = new CompletableFuture<>();
            reads.add(f);
            return f;
        }

        void answer(int read, long revision) {
            reads.get(read).complete(FencingToken.of(revision));
        }
    }

    /** A coordination service at a fixed revision, answering at once. */
    static IssuedBound at(long revision) {
        return () -> CompletableFuture.completedFuture(FencingToken.of(revision));
    }

    @Test
    void aTokenNobodyIssuedIsRefusedAndNeverMovesTheMark() throws Exception {
        List<GuardListener.Rejection> rejections = new CopyOnWriteArrayList<>();
        Guard g = Guard.builder()
                .issuedBound(at(100))
                .initialToken(t(50))
                .listener(new GuardListener() {
                    @Override
                    public void rejected(String key, FencingToken token, Rejection why) {
                        rejections.add(why);
                    }
                })
                .build();
        TokenNotIssuedException e = assertThrows(TokenNotIssuedException.class, () -> g.check(POISON));
        assertEquals(POISON, e.token());
        assertEquals(t(100), e.bound());
        assertThrows(TokenNotIssuedException.class, () -> g.admit(POISON));
        assertThrows(TokenNotIssuedException.class, () -> g.check(t(101)));
        assertEquals(Optional.of(t(50)), g.highWater());
        assertEquals(
                List.of(
                        GuardListener.Rejection.NOT_ISSUED,
                        GuardListener.Rejection.NOT_ISSUED,
                        GuardListener.Rejection.NOT_ISSUED),
                rejections);
        g.admit(t(100)).close(); // the next legitimate owner
        assertEquals(Optional.of(t(100)), g.highWater());
        assertThrows(TokenStaleException.class, () -> g.check(t(99)));
    }

    @Test
    void withoutABoundThePoisonedTokenLocksEveryOwnerOut() {
        Guard g = Guard.create();
        g.check(POISON); // what the bound prevents
        assertThrows(TokenStaleException.class, () -> g.check(t(100)));
    }

    @Test
    void oneReadConfirmsAHundredConcurrentRequestsWithOneNewToken() throws Exception {
        HandBound bound = new HandBound();
        Guard g = Guard.builder().issuedBound(bound).initialToken(t(10)).build();
        List<Future<FencingToken>> requests = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            requests.add(pool.submit(() -> {
                try (Guard.Admission a = g.admit(t(20))) {
                    return a.token();
                }
            }));
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 1);
        bound.answer(0, 25);
        for (Future<FencingToken> f : requests) {
            assertEquals(t(20), f.get(10, TimeUnit.SECONDS));
        }
        assertEquals(1, bound.reads.size(), "one read for all");
        assertEquals(Optional.of(t(25)), g.confirmedBound());
        g.check(t(25)); // at the confirmed bound: no read
        assertEquals(1, bound.reads.size());
    }

    @Test
    void aReadStartedBeforeTheRequestArrivedCannotRefuseItTheNextReadDecides() throws Exception {
        HandBound bound = new HandBound();
        Guard g = Guard.builder().issuedBound(bound).build();
        Future<?> first = pool.submit(() -> g.check(t(5)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 1);
        // token 8 is issued after read 0 began; its request arrives while read 0 is in flight
        Future<?> second = pool.submit(() -> g.check(t(8)));
        Awaitility.await()
                .pollDelay(Duration.ofMillis(50))
                .atMost(Duration.ofSeconds(10))
                .until(() -> true);
        bound.answer(0, 6); // read 0 was served before 8 was issued
        first.get(10, TimeUnit.SECONDS);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 2);
        assertTrue(!second.isDone(), "not refused by a read that began before it arrived");
        bound.answer(1, 9);
        second.get(10, TimeUnit.SECONDS);
        assertEquals(Optional.of(t(8)), g.highWater());
    }

    @Test
    void anUnansweredReadRefusesOnlyTheNewTokenInTimeAndTheNextRequestReadsAgain() throws Exception {
        HandBound bound = new HandBound();
        List<GuardListener.Rejection> rejections = new CopyOnWriteArrayList<>();
        Guard g = Guard.builder()
                .issuedBound(bound)
                .boundTimeout(Duration.ofMillis(300))
                .listener(new GuardListener() {
                    @Override
                    public void rejected(String key, FencingToken token, Rejection why) {
                        rejections.add(why);
                    }
                })
                .build();
        Future<?> owner = pool.submit(() -> g.check(t(10)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 1);
        bound.answer(0, 12);
        owner.get(10, TimeUnit.SECONDS);

        long start = System.nanoTime();
        BoundUnavailableException e = assertThrows(BoundUnavailableException.class, () -> g.admit(t(20)));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms >= 250 && ms < 3000, "refused after about the bound timeout: " + ms + " ms");
        assertInstanceOf(TimeoutException.class, e.getCause());
        assertEquals(t(20), e.token());
        assertEquals(List.of(GuardListener.Rejection.BOUND_UNAVAILABLE), rejections);
        assertEquals(Optional.of(t(10)), g.highWater());
        g.admit(t(10)).close(); // the current owner still passes
        g.check(t(12)); // at the confirmed bound: no read needed
        assertEquals(2, bound.reads.size());

        Future<?> retry = pool.submit(() -> g.check(t(20)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 3);
        bound.answer(2, 20);
        retry.get(10, TimeUnit.SECONDS);
        assertEquals(Optional.of(t(20)), g.highWater());
    }

    @Test
    void aFailedReadRefusesTheTokenWithItsCause() {
        IllegalStateException down = new IllegalStateException("no leader");
        Guard g = Guard.builder()
                .issuedBound(() -> CompletableFuture.failedFuture(down))
                .build();
        BoundUnavailableException e = assertThrows(BoundUnavailableException.class, () -> g.check(t(3)));
        assertEquals(down, e.getCause());
        assertTrue(g.highWater().isEmpty());
    }

    @Test
    void aKeyedGuardSharesOneConfirmedBoundAcrossKeys() throws Exception {
        HandBound bound = new HandBound();
        KeyedGuard keyed = Guard.builder().issuedBound(bound).buildKeyed();
        Future<?> a = pool.submit(() -> keyed.forKey("a").check(t(30)));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 1);
        bound.answer(0, 40);
        a.get(10, TimeUnit.SECONDS);
        keyed.forKey("b").check(t(35)); // confirmed by key a's read
        assertEquals(1, bound.reads.size());
        assertThrows(TokenNotIssuedException.class, () -> {
            Future<?> p = pool.submit(() -> keyed.forKey("b").check(POISON));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bound.reads.size() == 2);
            bound.answer(1, 41);
            try {
                p.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause();
            }
        });
        assertEquals(Optional.of(t(35)), keyed.forKey("b").highWater());
    }

    @Test
    void aPoisonedMarkIsLoweredToTheRevisionNeverBelowAndTheStoreKeepsTheLowerMark() throws Exception {
        Path file = dir.resolve("marks");
        Guard old = Guard.builder().store(GuardStore.file(file)).build(); // before the bound existed
        old.check(t(7));
        old.admit(POISON).close();
        assertEquals(Map.of("", POISON), GuardStore.file(file).load());

        Guard g = Guard.builder()
                .store(GuardStore.file(file))
                .issuedBound(at(120))
                .build();
        assertThrows(TokenStaleException.class, () -> g.check(t(110)), "poisoned: a real owner is stale");
        IllegalArgumentException below = assertThrows(IllegalArgumentException.class, () -> g.lowerMark(t(119)));
        assertTrue(
                below.getMessage().contains("below the coordination service's current revision 120"),
                below.getMessage());
        assertEquals(Optional.of(POISON), g.highWater(), "refused: nothing changed");

        assertEquals(Optional.of(t(120)), g.lowerMarkToBound());
        assertEquals(Map.of("", t(120)), GuardStore.file(file).load());
        assertThrows(TokenStaleException.class, () -> g.check(t(110)), "issued before the revision: still rejected");
        assertThrows(TokenNotIssuedException.class, () -> g.admit(POISON), "the poison again: not issued");
        assertThrows(TokenNotIssuedException.class, () -> g.check(POISON));
        g.admit(t(120)).close();
        assertEquals(Optional.of(t(120)), g.lowerMark(t(150)), "a mark already below is left as it is");

        Guard restarted = Guard.builder()
                .store(GuardStore.file(file))
                .issuedBound(at(130))
                .build();
        assertEquals(Optional.of(t(120)), restarted.highWater());
        restarted.admit(t(125)).close(); // the next owner
    }

    @Test
    void loweringNeedsABoundAndAStoreThatCanLower() throws Exception {
        Guard plain = Guard.withInitialToken(POISON);
        assertThrows(IllegalStateException.class, plain::lowerMarkToBound);
        GuardStore appendOnly = new GuardStore() {
            @Override
            public Map<String, FencingToken> load() {
                return Map.of("", POISON);
            }

            @Override
            public void persist(String key, FencingToken mark) {}
        };
        Guard g = Guard.builder().store(appendOnly).issuedBound(at(5)).build();
        assertThrows(UnsupportedOperationException.class, g::lowerMarkToBound);
        assertEquals(Optional.of(POISON), g.highWater());
    }

    @Test
    void admissionsOfThePoisonedTokenCompleteBeforeTheNextOwnerAfterLowering() throws Exception {
        Guard g = Guard.builder().issuedBound(at(60)).initialToken(POISON).build();
        Guard.Admission poisoned = g.admit(POISON); // the mark was loaded poisoned, and a request of it runs
        assertEquals(Optional.of(t(60)), g.lowerMarkToBound());
        Future<Guard.Admission> next = pool.submit(() -> g.admit(t(60)));
        Awaitility.await()
                .pollDelay(Duration.ofMillis(100))
                .atMost(Duration.ofSeconds(10))
                .until(() -> true);
        assertTrue(!next.isDone(), "waits for the running admission");
        poisoned.close();
        next.get(10, TimeUnit.SECONDS).close();
    }
}

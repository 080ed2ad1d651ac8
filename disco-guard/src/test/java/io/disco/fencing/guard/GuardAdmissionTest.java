package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.t;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.TokenStaleException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Ordered admission: every action admitted with token t completes before any action with a higher token starts. */
class GuardAdmissionTest {

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private CompletableFuture<Guard.Admission> admitLater(Guard g, long token) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return g.admit(t(token));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                pool);
    }

    /**
     * Admits {@code token} on another thread, where it waits behind the older actions still running, and returns once
     * the guard has taken it as its mark.
     */
    private CompletableFuture<Guard.Admission> waitingAsTheMark(Guard g, long token) {
        CompletableFuture<Guard.Admission> f = admitLater(g, token);
        await().atMost(Duration.ofSeconds(1)).until(() -> g.highWater().equals(java.util.Optional.of(t(token))));
        return f;
    }

    /** A negative check, bounded: the admission must not have happened during this time. */
    private static void assertStillWaiting(CompletableFuture<?> f) {
        await("must still wait for the older action")
                .during(Duration.ofMillis(200))
                .atMost(Duration.ofSeconds(2))
                .until(() -> !f.isDone());
        assertFalse(f.isDone(), "must still wait for the older action");
    }

    @Test
    void aNewerTokenWaitsUntilTheOlderActionHasCompleted() throws Exception {
        Guard g = Guard.create();
        Guard.Admission zombie = g.admit(t(5));
        CompletableFuture<Guard.Admission> owner = admitLater(g, 6);
        assertStillWaiting(owner);
        zombie.close();
        Guard.Admission a = owner.get(1, SECONDS);
        assertEquals(t(6), a.token());
        a.close();
    }

    @Test
    void onceANewerTokenIsSeenOlderOnesAreRejectedAtOnce() throws Exception {
        Guard g = Guard.create();
        Guard.Admission zombie = g.admit(t(5));
        CompletableFuture<Guard.Admission> owner = waitingAsTheMark(g, 6);
        TokenStaleException e =
                assertThrows(TokenStaleException.class, () -> g.admit(t(5)), "while 6 waits, 5 is stale");
        assertEquals(t(6), e.highWater());
        zombie.close();
        owner.get(1, SECONDS).close();
    }

    @Test
    void equalTokensRunTogether() throws Exception {
        Guard g = Guard.create();
        try (Guard.Admission a = g.admit(t(7));
                Guard.Admission b = admitLater(g, 7).get(1, SECONDS)) {
            assertEquals(a.token(), b.token());
        }
    }

    @Test
    void theDrainTimeoutRefusesTheNewerRequestAndKeepsItsMark() throws Exception {
        Guard g = Guard.builder().drainTimeout(Duration.ofMillis(200)).build();
        Guard.Admission zombie = g.admit(t(5));
        long start = System.nanoTime();
        assertThrows(DrainTimeoutException.class, () -> g.admit(t(6)));
        assertTrue(System.nanoTime() - start >= Duration.ofMillis(200).toNanos());
        assertThrows(TokenStaleException.class, () -> g.admit(t(5)), "the refused newer token is still the mark");
        zombie.close();
        g.admit(t(6)).close();
    }

    @Test
    void aWaitingTokenOvertakenByAHigherOneIsRejected() throws Exception {
        Guard g = Guard.create();
        Guard.Admission zombie = g.admit(t(5));
        CompletableFuture<Guard.Admission> six = waitingAsTheMark(g, 6);
        CompletableFuture<Guard.Admission> seven = admitLater(g, 7);
        ExecutionException e = assertThrows(ExecutionException.class, () -> six.get(1, SECONDS));
        assertInstanceOf(TokenStaleException.class, e.getCause());
        assertStillWaiting(seven);
        zombie.close();
        seven.get(1, SECONDS).close();
    }

    @Test
    void closeIsIdempotent() throws Exception {
        Guard g = Guard.create();
        Guard.Admission a = g.admit(t(3));
        Guard.Admission b = g.admit(t(3));
        a.close();
        a.close(); // must not close b's share
        CompletableFuture<Guard.Admission> four = admitLater(g, 4);
        assertStillWaiting(four);
        b.close();
        four.get(1, SECONDS).close();
    }

    /** One admitted action: its token and the order numbers of its start and end. */
    private record Action(long token, long start, long end) {}

    /**
     * 8 threads with random, mostly increasing tokens. History check: an action that started before
     * another completed never has a higher token than it.
     */
    @Test
    void noActionStartsBeforeEveryLowerTokensActionHasCompleted() throws Exception {
        Guard g = Guard.create();
        AtomicLong clock = new AtomicLong();
        AtomicLong next = new AtomicLong(1);
        List<Action> history = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            workers.add(CompletableFuture.runAsync(
                    () -> {
                        for (int i = 0; i < 300; i++) {
                            int dice = ThreadLocalRandom.current().nextInt(8);
                            long token = dice == 0
                                    ? next.incrementAndGet()
                                    : dice == 1 ? Math.max(1, next.get() - 1) : next.get();
                            try {
                                g.run(t(token), () -> {
                                    long start = clock.incrementAndGet();
                                    for (int spin = ThreadLocalRandom.current().nextInt(200); spin > 0; spin--) {
                                        Thread.onSpinWait();
                                    }
                                    history.add(new Action(token, start, clock.incrementAndGet()));
                                });
                            } catch (TokenStaleException stale) {
                                // a higher token was seen first: rejected, never ran
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        }
                    },
                    pool));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, SECONDS);
        List<String> violations = new ArrayList<>();
        for (Action done : history) {
            for (Action other : history) {
                if (other.start() < done.end() && other.token() > done.token()) {
                    violations.add(other + " started before " + done + " completed");
                }
            }
        }
        assertTrue(history.size() > 1000, "enough actions ran: " + history.size());
        assertTrue(history.stream().map(Action::token).distinct().count() > 20, "the token advanced often");
        assertEquals(List.of(), violations.subList(0, Math.min(5, violations.size())));
    }
}

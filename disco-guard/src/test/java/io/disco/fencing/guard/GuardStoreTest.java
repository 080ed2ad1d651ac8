package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.testservers.ThreadPerTask;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The mark survives a new guard on the same store; the store is written only when the mark advances. */
class GuardStoreTest {

    /** A thread per task: these tasks block. */
    private static final java.util.concurrent.Executor THREADS = ThreadPerTask.DAEMON;

    @TempDir
    Path dir;

    @Test
    void aNewGuardOnTheSameFileRejectsWhatTheOldOneHadOutgrown() throws Exception {
        Path file = dir.resolve("marks");
        Guard first = Guard.builder().store(GuardStore.file(file)).build();
        first.check(t(10));
        first.admit(t(20)).close();

        Guard restarted = Guard.builder().store(GuardStore.file(file)).build();
        assertEquals(Optional.of(t(20)), restarted.highWater());
        assertThrows(TokenStaleException.class, () -> restarted.check(t(19)));
        restarted.check(t(20));
        assertTrue(Files.notExists(dir.resolve("marks.tmp")), "no temporary file is left behind");
    }

    @Test
    void theInitialTokenAndTheStoredMarkTakeTheHigher() throws Exception {
        Path file = dir.resolve("marks");
        Guard.builder().store(GuardStore.file(file)).build().check(t(30));
        assertEquals(
                Optional.of(t(30)),
                Guard.builder()
                        .store(GuardStore.file(file))
                        .initialToken(t(5))
                        .build()
                        .highWater());
        assertEquals(
                Optional.of(t(50)),
                Guard.builder()
                        .store(GuardStore.file(file))
                        .initialToken(t(50))
                        .build()
                        .highWater());
    }

    @Test
    void theStoreIsWrittenOnlyWhenTheMarkAdvances() throws Exception {
        Recording store = new Recording();
        Guard g = Guard.builder().store(store).build();
        for (int i = 0; i < 100; i++) {
            g.check(t(7));
            g.admit(t(7)).close();
        }
        g.check(t(8));
        assertThrows(TokenStaleException.class, () -> g.check(t(6)));
        assertEquals(List.of("=7", "=8"), store.writes);
    }

    @Test
    void aStoreThatCannotWriteRefusesTheHigherTokenAndKeepsTheMark() throws Exception {
        Recording store = new Recording();
        Guard g = Guard.builder().store(store).build();
        g.check(t(7));
        store.failing = true;
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> g.check(t(8)));
        assertTrue(e.getMessage().contains("could not persist the fencing mark 8"), e.getMessage());
        assertThrows(UncheckedIOException.class, () -> g.admit(t(9)));
        assertEquals(Optional.of(t(7)), g.highWater());
        g.admit(t(7)).close();
        store.failing = false;
        g.check(t(8));
    }

    @Test
    void aKeyedGuardPersistsEveryKey() throws Exception {
        Path file = dir.resolve("marks");
        KeyedGuard first = Guard.builder().store(GuardStore.file(file)).buildKeyed();
        first.forKey("orders").check(t(12));
        first.forKey("invoices = \u00e9\u00e8 / x").check(t(9));
        first.forKey("orders").check(t(14));

        KeyedGuard restarted = Guard.builder().store(GuardStore.file(file)).buildKeyed();
        assertThrows(TokenStaleException.class, () -> restarted.forKey("orders").check(t(13)));
        assertThrows(
                TokenStaleException.class,
                () -> restarted.forKey("invoices = \u00e9\u00e8 / x").check(t(8)));
        restarted.forKey("never-seen").check(t(1));
    }

    @Test
    void aUserSynchronizingOnTheStoreDoesNotStallTheGuard() throws Exception {
        GuardStore store = GuardStore.file(dir.resolve("marks"));
        Guard g = Guard.builder().store(store).build();
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread user = new Thread(() -> {
            synchronized (store) { // a user's own lock on the object it was handed
                holding.countDown();
                try {
                    done.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        user.start();
        assertTrue(holding.await(5, java.util.concurrent.TimeUnit.SECONDS));
        try {
            java.util.concurrent.CompletableFuture.runAsync(() -> g.check(t(3)), THREADS)
                    .get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(Optional.of(t(3)), g.highWater());
        } finally {
            done.countDown();
            user.join(10_000);
        }
    }

    @Test
    void aCorruptFileIsAClearErrorAtBuild() throws Exception {
        Path file = dir.resolve("marks");
        Files.writeString(file, "=abc\n");
        UncheckedIOException e = assertThrows(
                UncheckedIOException.class,
                () -> Guard.builder().store(GuardStore.file(file)).build());
        assertTrue(
                e.getCause().getMessage().contains(file.toString()),
                e.getCause().getMessage());
    }

    /** Records each persist; can be told to fail. */
    private static final class Recording implements GuardStore {
        final List<String> writes = new CopyOnWriteArrayList<>();
        final Map<String, FencingToken> marks = new HashMap<>();
        volatile boolean failing;

        @Override
        public Map<String, FencingToken> load() {
            return marks;
        }

        @Override
        public void persist(String key, FencingToken mark) throws IOException {
            if (failing) {
                throw new IOException("disk full");
            }
            writes.add(key + "=" + mark.value());
            marks.put(key, mark);
        }
    }
}

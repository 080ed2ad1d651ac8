package io.disco.core.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The thread and callback rules every provider shares; no backend needed. */
class ThreadRulesTest {

    private final ScheduledThreadPoolExecutor session = SessionThread.newExecutor("disco-session-test");

    @AfterEach
    void stop() {
        session.shutdownNow();
    }

    private <T> T onSession(java.util.concurrent.Callable<T> task) throws Exception {
        return session.submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aBlockingCallIsRefusedOnASessionThreadOnly() throws Exception {
        assertDoesNotThrow(() -> SessionThread.refuseOnSessionThread("lock.lock()"));
        IllegalStateException e = onSession(() ->
                assertThrows(IllegalStateException.class, () -> SessionThread.refuseOnSessionThread("lock.lock()")));
        assertTrue(
                e.getMessage().startsWith("lock.lock() was called on disco's internal thread disco-session-test"),
                e.getMessage());
        assertTrue(onSession(SessionThread::onSessionThread));
        assertFalse(SessionThread.onSessionThread());
    }

    @Test
    void userCodeNeverRunsOnASessionThreadEvenWithADirectExecutor() throws Exception {
        Callbacks direct = new Callbacks(Runnable::run);
        CompletableFuture<String> ran = new CompletableFuture<>();
        onSession(() -> {
            direct.deliver(() -> ran.complete(Thread.currentThread().getName()));
            return null;
        });
        assertTrue(ran.get(10, TimeUnit.SECONDS).startsWith("disco-callback-"), ran.get());

        CompletableFuture<Thread> inline = new CompletableFuture<>();
        direct.deliver(() -> inline.complete(Thread.currentThread()));
        assertEquals(
                Thread.currentThread(),
                inline.getNow(null),
                "off the session threads a direct executor runs it in place");
    }

    @Test
    void aRejectingExecutorFallsBackToTheDefaultPool() throws Exception {
        Callbacks rejecting = new Callbacks(r -> {
            throw new RejectedExecutionException("shut down");
        });
        CompletableFuture<String> ran = new CompletableFuture<>();
        rejecting.deliver(() -> ran.complete(Thread.currentThread().getName()));
        assertTrue(ran.get(10, TimeUnit.SECONDS).startsWith("disco-callback-"));
        assertTrue(new Callbacks(null).executor() != null, "a default pool when the user chose none");
    }

    @Test
    void aUserFuturePassesCancellationToItsSourceAndRefusesCompletionByTheUser() {
        CompletableFuture<String> source = new CompletableFuture<>();
        UserFuture<String> view = new UserFuture<>(Runnable::run, source);
        assertThrows(UnsupportedOperationException.class, () -> view.complete("x"));
        assertTrue(view.cancel(true));
        assertTrue(source.isCancelled());

        CompletableFuture<String> committed = CompletableFuture.completedFuture("grant");
        UserFuture<String> late = new UserFuture<>(Runnable::run, committed);
        assertFalse(late.cancel(true), "a committed source cannot be given up: the answer arrives as usual");
        late.answer("grant", null);
        assertEquals("grant", late.join());
    }

    @Test
    void aUserFutureUnwrapsTheInternalFailure() {
        UserFuture<String> view = new UserFuture<>(Runnable::run, null);
        IllegalStateException cause = new IllegalStateException("closed");
        view.answer(null, new CompletionException(cause));
        ExecutionException e = assertThrows(ExecutionException.class, view::get);
        assertEquals(cause, e.getCause());
    }

    @Test
    void listenersAreToldInOrderOffTheSessionThreadsAndAThrowingOneStopsNothing() throws Exception {
        List<String> told = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> closed = new CompletableFuture<>();
        SessionListener throwing = new SessionListener() {
            @Override
            public void renewed(DiscoSession s, Duration remaining) {
                throw new IllegalStateException("a broken listener");
            }
        };
        SessionListener recording = new SessionListener() {
            @Override
            public void renewed(DiscoSession s, Duration remaining) {
                told.add("renewed " + remaining.toSeconds() + " on "
                        + Thread.currentThread().getName());
            }

            @Override
            public void closed(DiscoSession s) {
                told.add("closed");
                closed.complete(null);
            }
        };
        SessionEvents events = new SessionEvents(List.of(throwing, recording), session, new Callbacks(Runnable::run));
        assertTrue(events.listened());
        onSession(() -> {
            for (int i = 1; i <= 3; i++) {
                Duration d = Duration.ofSeconds(i);
                events.tell(l -> l.renewed(null, d));
            }
            events.tell(l -> l.closed(null));
            return null;
        });
        closed.get(10, TimeUnit.SECONDS);
        assertEquals(4, told.size(), told.toString());
        for (int i = 0; i < 3; i++) {
            assertTrue(told.get(i).startsWith("renewed " + (i + 1) + " on disco-callback-"), told.get(i));
        }
        assertEquals("closed", told.get(3));
        assertFalse(new SessionEvents(List.of(), session, new Callbacks(null)).listened());
    }
}

package io.disco.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link SessionEvents} at a session's end: nothing told is lost when the batches' timer stops. */
class SessionEventsTest {

    @Test
    void eventsQueuedWhenTheTimerIsStoppedAtOnceAreToldAllTheSameAndInOrder() throws Exception {
        List<String> told = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> closed = new CompletableFuture<>();
        SessionListener recording = new SessionListener() {
            @Override
            public void renewed(DiscoSession s, Duration remaining) {
                told.add("renewed");
            }

            @Override
            public void closed(DiscoSession s) {
                told.add("closed");
                closed.complete(null);
            }
        };
        ScheduledThreadPoolExecutor timer = SessionThread.newExecutor("test-session-events");
        SessionEvents events = new SessionEvents(List.of(recording), timer, new Callbacks(null));
        events.tell(l -> l.renewed(null, Duration.ZERO)); // its batch waits on the timer
        events.end();
        timer.shutdownNow(); // as an etcd session stops its lease timer: the batch is dropped from the timer
        events.tell(l -> l.closed(null));
        closed.get(5, TimeUnit.SECONDS);
        assertEquals(List.of("renewed", "closed"), told);
    }
}

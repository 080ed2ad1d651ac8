package io.disco.provider.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The wait for the close of connections that disco opened on the application's Lettuce client. Lettuce closes a
 * connection asynchronously, and the client forgets it only once it is closed: an application that shuts its client
 * down just after {@code Disco.close()} (the order the docs give) would otherwise find disco's connections still
 * listed, close them again and log "Connection is already closed" for each. So a close waits for them, at most
 * {@link #BOUND} (a close is local: it needs no answer from Redis), except on Lettuce's own threads, whose event loop
 * completes the closes.
 */
final class ConnectionClose {

    /** The longest a close waits for its connections. */
    static final Duration BOUND = Duration.ofSeconds(2);

    private ConnectionClose() {}

    /**
     * Waits until {@code closing} (the futures of {@code closeAsync()} calls) complete, at most {@link #BOUND}; not on a
     * Lettuce thread. An interruption ends the wait and is kept in the thread's status; a failed close is not waited
     * for again.
     */
    static void await(List<CompletableFuture<Void>> closing) {
        if (closing.isEmpty() || Thread.currentThread().getName().startsWith("lettuce-")) {
            return;
        }
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
                    .get(BOUND.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // closed anyway: Lettuce goes on closing them; the client's shutdown closes what is left
        }
    }
}

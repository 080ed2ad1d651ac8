package io.disco.fencing;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What every per-owner service of this library has, whatever it coordinates (a lock, a read/write
 * lock, a semaphore, an election): the grant it holds now, its end, the loss that caused it, and its
 * close. One service is one owner on one lease; when that lease is lost the service is finished
 * ({@link #done()} completes and {@link #err()} tells why) and a new one must be opened.
 *
 * @param <G> the grant the service hands out, carrying its fencing token
 * @param <E> the exception that reports the loss of the service's lease
 */
public interface DiscoService<G extends Fenced, E extends DiscoException> extends AutoCloseable {

    /**
     * The grant this service holds now.
     *
     * @return the held grant, or empty when none is held (also after a loss or a close)
     */
    Optional<G> held();

    /**
     * Completes, once, when the service's lease is lost or the service is closed. It always completes
     * normally; ask {@link #err()} whether the reason was a loss.
     *
     * @return a stage that completes when the service is finished
     */
    CompletionStage<Void> done();

    /**
     * The reason the lease was lost, once {@link #done()} completed because of a loss.
     *
     * @return the loss, or empty while the service is healthy or after a plain {@link #close()}
     */
    Optional<E> err();

    /**
     * Like {@link #close()}, without blocking the caller: the future completes, off the backend's
     * threads, once the close has finished.
     *
     * @return the pending close
     */
    CompletableFuture<Void> closeAsync();

    /**
     * Releases what the service holds, withdraws what it waits for, and completes {@link #done()};
     * revokes the lease if the service owns its session. Idempotent; it throws nothing checked.
     */
    @Override
    void close();
}

package io.disco.core;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A provider's session as its listeners and monitors see it, whatever the backend: one lease (etcd)
 * or session (ZooKeeper), kept alive in the background and shared by any number of lock, read/write
 * lock, semaphore and election services. When it is lost, every grant held through it is lost.
 *
 * <p>Implementations are thread-safe.
 */
public interface DiscoSession extends AutoCloseable {

    /** @return the id of the session's lease (etcd's lease id; a ZooKeeper session id) */
    long leaseId();

    /** @return the time to live the backend granted the lease */
    Duration ttl();

    /**
     * How long the lease is valid from now, on the local monotonic clock: what a health check asks.
     *
     * @return the remaining validity; zero once lost or closed
     */
    Duration remainingValidity();

    /**
     * Completes, once, when the lease is lost or the session is closed. Always completes normally;
     * {@link #err()} tells whether it was a loss.
     *
     * @return a stage completing when the session is finished
     */
    CompletionStage<Void> done();

    /** @return the reason the lease was lost, or empty while alive or after a plain close */
    Optional<DiscoException> err();

    /**
     * Who holds and who waits for a name, read from the backend in one consistent snapshot: the
     * holders first, then the waiters, each in queue order, with its key, lease, token and
     * {@linkplain ClaimMetadata metadata}. Keys of other clients on the name (etcd's Go recipes,
     * {@code etcdctl}) are listed too, with the metadata their value allows; a value this library did
     * not write is never an error. Only reads: it works on any name, whether this session uses it or
     * not, and on a lost or closed session as long as the backend's client is open.
     *
     * @param primitive what the name is: its keys, holders and tokens depend on it
     * @param name the primitive's name, as given to the service
     * @return the claimants, holders then waiters in queue order; empty when nobody holds or waits
     * @throws NullPointerException if {@code primitive} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws IllegalStateException if called on a session thread
     * @throws DiscoException if the backend does not answer within the request timeout
     */
    List<Claimant> claimants(Primitive primitive, String name);

    /**
     * Releases the lease (and so everything held through it) and finishes every service of the
     * session. Never closes the backend's client, which belongs to the caller. Idempotent.
     */
    @Override
    void close();
}

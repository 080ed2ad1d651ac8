package io.disco.client;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The service provider interface a backend (etcd, ZooKeeper, ...) implements so that
 * {@link Disco#over(DiscoBackend)} can run on it: open an owner (a lease, a session), and make the
 * per-owner services on it. The client does the rest (names, threads, local queues, healing), the same
 * for every backend.
 *
 * <p>Requirements on implementations:
 * <ul>
 *   <li>{@link #open()} blocks until the owner is ready, at most the backend's request timeout, and
 *       throws {@link DiscoException} if the backend cannot be reached.</li>
 *   <li>An owner's services behave as their API modules say; a service made on an owner finishes when
 *       the owner is lost or closed.</li>
 *   <li>Closing an idle service (nothing held, nothing waiting) must not wait for the backend: the
 *       client closes a name's service when the name falls idle, on the releasing thread.</li>
 *   <li>{@link Owner#done()} completes off the threads that keep the owner alive.</li>
 *   <li>{@link #open()}'s failure says why, naming the endpoints (refused, unknown host, TLS, authentication,
 *       no answer in time): the client reports it in {@link Disco#status()} and in
 *       {@link BackendUnavailableException}.</li>
 * </ul>
 */
public interface DiscoBackend {

    /**
     * Opens a new owner: for etcd, grants a lease and starts keeping it alive.
     *
     * @return the owner
     * @throws DiscoException if the backend cannot be reached or refuses
     */
    Owner open();

    /** @return what log messages and {@code toString()} name: the backend and its endpoints, for example {@code etcd at 10.0.0.1:2379} */
    String describe();

    /**
     * How long an acquisition of the client waits for an owner while the client has none (the last one
     * was lost, or none could be opened yet), counted from when the client lost it: past it the
     * acquisition throws {@link BackendUnavailableException}, and so do acquisitions that start later,
     * at once, until an owner is open again. A provider's option (for etcd {@code EtcdOptions.ownerWait},
     * by default the lease TTL); the default here is 30 s.
     *
     * @return the owner wait, positive
     */
    default java.time.Duration ownerWait() {
        return java.time.Duration.ofSeconds(30);
    }

    /**
     * Whether the application closed the client this backend runs on (for etcd: the jetcd {@code Client})
     * while the {@link Disco} is still open, a shutdown-order mistake: then no owner can be kept or opened
     * again, and the client stops for good ({@link DiscoStatus.State#CLOSED}, every operation throwing
     * {@link IllegalStateException} with this reason) instead of retrying. Called on every acquisition and
     * status: it must be cheap and must not block. The default: never (a backend that builds its own
     * clients).
     *
     * @return the reason, naming the client and the right order, or empty while it is open
     */
    default Optional<String> clientClosed() {
        return Optional.empty();
    }

    /**
     * One owner in the backend (an etcd lease, a ZooKeeper session), on which services are made.
     * Thread-safe.
     */
    interface Owner extends AutoCloseable {

        /**
         * @param name the lock's name, already checked by the client
         * @return a new lock service on this owner
         * @throws IllegalStateException if the owner is lost or closed
         */
        LockService newLock(String name);

        /**
         * @param name the read/write lock's name, already checked by the client
         * @return a new read/write lock service on this owner
         * @throws IllegalStateException if the owner is lost or closed
         */
        RWLockService newRWLock(String name);

        /**
         * One more holder of the semaphore {@code name} on this owner: the client makes one per permit
         * held or waited for at once, so an owner must allow several on one name, each its own holder
         * (for etcd: its own key on the owner's lease) counted once against {@code limit}.
         *
         * @param name the semaphore's name, already checked by the client
         * @param limit the semaphore's limit, positive
         * @return a new semaphore service on this owner
         * @throws IllegalArgumentException if the name's recorded limit is another
         * @throws IllegalStateException if the owner is lost or closed
         */
        SemaphoreService newSemaphore(String name, int limit);

        /**
         * A candidate of this owner in the election {@code name}: its key is the owner's (for etcd:
         * {@code <name>/<lease id in hex>}, as etcd's Go {@code concurrency.Election} writes it), so an owner
         * has at most one candidate per name. Closing the service withdraws the candidate (resigns if it
         * leads) and leaves the owner open; the service finishes, lost, when the owner is lost.
         *
         * <p>The default refuses: a backend without elections still runs the client's locks.
         *
         * @param name the election's name, already checked by the client
         * @return a new election service on this owner
         * @throws IllegalStateException if the owner is lost or closed, or already has a service on {@code name}
         * @throws UnsupportedOperationException if the backend has no elections
         */
        default ElectionService newElection(String name) {
            throw new UnsupportedOperationException(getClass().getName() + " has no elections");
        }

        /**
         * Lists who holds and who waits for {@code name} as {@code primitive}, holders first, then waiters
         * in queue order, with one consistent read of the backend. Only reads: works while the owner is
         * lost or closed too (the backend's client must be open).
         *
         * <p>The default refuses: a backend without a listing still runs the client's locks.
         *
         * @param primitive the kind the name is claimed as
         * @param name the name, already checked by the client
         * @return the claims, holders first
         * @throws DiscoException if the backend cannot be read
         * @throws UnsupportedOperationException if the backend cannot list claims
         */
        default List<Claimant> claimants(Primitive primitive, String name) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot list claimants");
        }

        /**
         * The barriers and double barriers, through this owner's connection to the backend: a barrier's key belongs to
         * no owner; a double barrier participant's key is this owner's.
         *
         * <p>The default refuses: a backend without barriers still runs the client's locks.
         *
         * @return the barrier steps
         * @throws UnsupportedOperationException if the backend has no barriers
         */
        default Barriers barriers() {
            throw new UnsupportedOperationException(getClass().getName() + " has no barriers");
        }

        /**
         * Completes, normally, once when the owner is lost or closed.
         *
         * @return the end of this owner
         */
        CompletionStage<Void> done();

        /** @return the loss, once lost; empty while alive and after a plain close */
        Optional<? extends DiscoException> err();

        /** @return the owner's id in the backend, for status reports (for etcd: the lease id in hex); empty if none */
        default String id() {
            return "";
        }

        /**
         * @return the owner as log messages name it, for example {@code lease 694d7f3c0a1b2c3d (TTL 30 s)}; by
         *     default {@code owner <id>}
         */
        default String describe() {
            return "owner " + id();
        }

        /** @return the time to live the backend granted the owner; zero if the backend has no such notion */
        default java.time.Duration ttl() {
            return java.time.Duration.ZERO;
        }

        /** @return how long the owner is valid from now, on the local monotonic clock; zero once lost or closed */
        default java.time.Duration remainingValidity() {
            return java.time.Duration.ZERO;
        }

        /**
         * Ends the owner and releases everything held through it (for etcd: revokes the lease); also
         * called after a loss, when the backend may still hold the owner's keys. Never closes the
         * backend's client. Idempotent.
         */
        @Override
        void close();
    }
}

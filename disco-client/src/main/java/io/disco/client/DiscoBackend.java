package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
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

    /** @return what log messages and {@code toString()} name, for example the endpoints */
    String describe();

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

package io.disco.client;

import io.disco.fencing.Fenced;

/**
 * Watches the acquisitions and holds of a {@link Disco} client, for tracing and metrics: each acquisition is one
 * {@link Attempt} (the wait, from the call to its end), and each grant one {@link Hold} (from the grant to its
 * release or loss). Backend-neutral: the client tells it the same for every backend. Give it to the client with
 * {@link DiscoOptions.Builder#observer}; {@code disco-micrometer}'s {@code DiscoObservations} makes Micrometer
 * {@code Observation}s of them. A client without one calls nothing and allocates nothing for it.
 *
 * <h2>What is told, and when</h2>
 * <ul>
 *   <li>{@link #started} once per acquisition that may wait, before it waits: a lock's or read/write lock's
 *       {@code lock()}, {@code lockInterruptibly()}, {@code tryLock} and {@code lockAsync()}; a semaphore's
 *       {@code acquire}, {@code tryAcquire} and {@code acquireAsync}; an election candidate's {@code campaign} and
 *       {@code campaignAsync}. Not for a reentrant acquisition by a thread that already holds the lock (in that
 *       mode), nor for a campaign of a candidate that already leads: those hold nothing new. It is called on the
 *       thread that asked, also for the asynchronous forms, so that an observer can take that thread's context (the
 *       request it serves) as the parent of what it records.</li>
 *   <li>Then exactly one of {@link Attempt#granted} (the acquisition holds) or {@link Attempt#ended} (it does
 *       not), on the thread that asked for the blocking forms; for the asynchronous forms on the thread that
 *       completes them (the acquisition's own thread for {@code lockAsync()}, the backend's callback executor for
 *       the others).</li>
 *   <li>For a hold, exactly one of {@link Hold#released} (its holder released it: on the releasing thread) or
 *       {@link Hold#lost} (it ended otherwise: its owner lost, its key deleted, its maximum hold time passed, or a
 *       release that did not complete and gave the grant up). A loss is noticed by the backend; it is told on the
 *       backend's callback executor or on the holder's thread, never on a thread that keeps the owner alive or
 *       detects its loss.</li>
 * </ul>
 *
 * <h2>Rules for implementations</h2>
 * Every method must return quickly and must not block: it runs inside the acquisition (so it adds to every
 * acquisition's time) or on the threads that deliver the backend's events. It must be thread-safe: one
 * acquisition's calls may come from two threads (the grant on one, the loss on another). What it throws is logged
 * and ignored: an acquisition never fails because of its observer.
 */
public interface AcquisitionObserver {

    /** What an acquisition acquires. */
    enum Kind {
        /** A lock ({@link Disco#lock(String)}). */
        LOCK,
        /** The read lock of a read/write lock ({@link Disco#readWriteLock(String)}). */
        READ_LOCK,
        /** The write lock of a read/write lock. */
        WRITE_LOCK,
        /** A permit of a semaphore ({@link Disco#semaphore(String, int)}). */
        SEMAPHORE,
        /** The leadership of an election ({@link Disco#election(String)}, and a leadership runner's campaigns). */
        ELECTION
    }

    /** How an acquisition ended. */
    enum Outcome {
        /** Granted: {@link Attempt#granted} tells it; never passed to {@link Attempt#ended}. */
        ACQUIRED,
        /** A try that found nothing free at once ({@code tryLock()}, {@code tryAcquire()}). */
        BUSY,
        /** The timeout passed first ({@code tryLock(time)}, {@code acquire(timeout)}, {@code campaign(timeout)}). */
        TIMED_OUT,
        /** The waiting thread was interrupted ({@code lockInterruptibly()}, {@code acquire()}, ...). */
        INTERRUPTED,
        /** The future of an asynchronous acquisition was cancelled (or completed by its caller). */
        CANCELLED,
        /** It failed: the backend, the owner wait, a name in use as another primitive, a closed client. */
        FAILED
    }

    /**
     * An acquisition starts; called on the thread that asked, before it waits.
     *
     * @param kind what it acquires
     * @param name the name of the lock, read/write lock, semaphore or election, as given to the client
     * @return what to tell how it ends; not null
     */
    Attempt started(Kind kind, String name);

    /** One acquisition, told once how it ended. */
    interface Attempt {

        /**
         * The acquisition holds.
         *
         * @param grant what it was granted: a lock's {@link io.disco.lock.Grant}, a read/write lock's
         *     {@link io.disco.rwlock.RWGrant}, a semaphore's {@link io.disco.semaphore.Permit}, an election's
         *     {@link io.disco.election.Leadership}; its token is the hold's fencing token
         * @return what to tell how the hold ends; not null
         */
        Hold granted(Fenced grant);

        /**
         * The acquisition ended without holding.
         *
         * @param outcome how; never {@link Outcome#ACQUIRED}
         * @param cause what it threw ({@link Outcome#FAILED}, {@link Outcome#INTERRUPTED}, {@link Outcome#CANCELLED}),
         *     or null
         */
        void ended(Outcome outcome, Throwable cause);
    }

    /** One hold, told once how it ended. */
    interface Hold {

        /** Its holder released it (a lock's last {@code unlock()}, a permit's {@code release}, a resignation). */
        void released();

        /**
         * It ended without its holder's release, or its release did not complete.
         *
         * @param cause the loss (the primitive's lost exception), or the release's failure
         */
        void lost(Throwable cause);
    }
}

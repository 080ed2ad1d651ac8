package io.disco.client;

/** How an acquisition waits, locally and in the backend. */
enum Wait {
    /** {@code lock()}: as long as it takes, ignoring interruption. */
    UNINTERRUPTIBLY,
    /** {@code lockInterruptibly()} and {@code tryLock(time)}: until the deadline (if any), interruptibly. */
    INTERRUPTIBLY,
    /** {@code tryLock()}: only if free now. */
    NOT_AT_ALL
}

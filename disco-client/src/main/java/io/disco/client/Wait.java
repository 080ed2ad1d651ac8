package io.disco.client;

/** How an acquisition waits, locally and in the backend. */
enum Wait {
    /** {@code lock()}: as long as it takes, ignoring interruption. */
    UNINTERRUPTIBLY,
    /** {@code lockInterruptibly()} and {@code tryLock(time)}: until the deadline (if any), interruptibly. */
    INTERRUPTIBLY,
    /** {@code tryLock()}: only if free now. */
    NOT_AT_ALL;

    /** @return the longest wait for {@code io.disco.fencing.LossGrace} of an acquisition that waits this way until {@code deadline} */
    long maxWait(long deadline) {
        return switch (this) {
            case NOT_AT_ALL -> 0;
            case UNINTERRUPTIBLY -> Long.MAX_VALUE;
            case INTERRUPTIBLY -> deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        };
    }
}

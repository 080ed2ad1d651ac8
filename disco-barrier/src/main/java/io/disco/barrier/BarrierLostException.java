package io.disco.barrier;

import io.disco.fencing.DiscoException;

/**
 * A double barrier participant's owner (its lease, its session) was lost while it was entering or inside: its key is
 * gone, the other participants no longer count it, and the handle is back outside (it may enter again).
 */
public class BarrierLostException extends DiscoException {

    /**
     * @param message what was lost
     * @param cause the underlying failure, or null
     */
    public BarrierLostException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import java.util.function.Supplier;

/**
 * Where a session stands: live, lost (with why) or closed; every move is checked (a lost session may still be
 * closed, nothing else). What may happen only while the session is usable (a service's registration) runs under its
 * monitor ({@link #whileUsable}), so that it never races the session's end. Thread-safe.
 */
final class SessionStatus {

    /** The states of a session. */
    enum State {
        /** Renewed in time: grants may be committed. */
        LIVE,
        /** Its claims may be expired by the server, or it was ended from outside: everything is lost. */
        LOST,
        /** Closed by its owner. */
        CLOSED
    }

    private State state = State.LIVE;
    private DiscoException loss;

    synchronized State state() {
        return state;
    }

    synchronized boolean ended() {
        return state != State.LIVE;
    }

    synchronized DiscoException lossOrNull() {
        return loss;
    }

    /**
     * Runs {@code task} under this status's monitor if the session is live.
     *
     * @throws IllegalStateException if the session is closed or lost
     */
    synchronized <T> T whileUsable(Supplier<String> name, Supplier<T> task) {
        if (state == State.CLOSED) {
            throw new IllegalStateException("the Redis session is closed: " + name.get());
        }
        if (state == State.LOST) {
            throw new IllegalStateException("the Redis session is lost (" + loss.getMessage() + "): open a new one");
        }
        return task.get();
    }

    /** @return the loss, or null if the session had ended already (nothing to do) */
    synchronized DiscoException lose(String reason, Throwable cause) {
        if (state != State.LIVE) {
            return null;
        }
        state = State.LOST;
        loss = new DiscoException(reason, cause);
        return loss;
    }

    /** @return false if the session was closed already, else true: it is closed now */
    synchronized boolean close() {
        if (state == State.CLOSED) {
            return false;
        }
        state = State.CLOSED;
        return true;
    }
}

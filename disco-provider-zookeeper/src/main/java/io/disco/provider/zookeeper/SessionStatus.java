package io.disco.provider.zookeeper;

import io.disco.fencing.DiscoException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * Where a session stands: its {@link SessionState} (every move checked), why it was lost, and the acquisitions
 * parked while it is SUSPENDED (no new grant is committed then), woken when it is connected again, lost or
 * closed. What may happen only while the session is usable (a service's registration) runs under its monitor
 * ({@link #whileUsable}), so that it never races the session's end. Thread-safe.
 */
final class SessionStatus {

    private final Object lock = new Object();
    private SessionState state = SessionState.CONNECTED;
    private DiscoException loss;
    private final List<Semaphore> parked = new ArrayList<>();

    SessionState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** @return whether the session is lost or closed */
    boolean ended() {
        synchronized (lock) {
            return state == SessionState.LOST || state == SessionState.CLOSED;
        }
    }

    /** @return the loss, if the session is lost; throws nothing */
    DiscoException lossOrNull() {
        synchronized (lock) {
            return loss;
        }
    }

    /**
     * Parks {@code wake} until the session is connected again (or lost, or closed), if it is suspended now.
     *
     * @return true if the session is suspended (the caller waits on {@code wake}), false if it is connected
     */
    boolean parkIfSuspended(Semaphore wake) {
        synchronized (lock) {
            if (state != SessionState.SUSPENDED) {
                return false;
            }
            parked.add(wake);
            return true;
        }
    }

    /**
     * Runs {@code task} under this status's monitor if the session is neither closed nor lost.
     *
     * @param name what the session is called in the message, asked only when it is closed
     * @throws IllegalStateException if the session is closed or lost
     */
    <T> T whileUsable(Supplier<String> name, Supplier<T> task) {
        synchronized (lock) {
            if (state == SessionState.CLOSED) {
                throw new IllegalStateException("the ZooKeeper session is closed: " + name.get());
            }
            if (state == SessionState.LOST) {
                throw new IllegalStateException(
                        "the ZooKeeper session is lost (" + loss.getMessage() + "): open a new one");
            }
            return task.get();
        }
    }

    /** A connection event: SUSPENDED, or CONNECTED again (which wakes the parked acquisitions); ignored once ended. */
    void move(SessionState to) {
        synchronized (lock) {
            if (state == to || !state.mayMoveTo(to)) {
                return;
            }
            state = state.to(to);
            if (to == SessionState.CONNECTED) {
                unparkLocked();
            }
        }
    }

    /**
     * Moves to LOST, with {@code reason}, unless the session already ended.
     *
     * @return the loss, or null if the session had already ended (nothing to do)
     */
    DiscoException lose(String reason, Throwable cause) {
        synchronized (lock) {
            if (!state.mayMoveTo(SessionState.LOST)) {
                return null;
            }
            state = state.to(SessionState.LOST);
            loss = new DiscoException(reason, cause);
            unparkLocked();
            return loss;
        }
    }

    /** @return false if the session was closed already (nothing to do), else true: it is closed now */
    boolean close() {
        synchronized (lock) {
            if (state == SessionState.CLOSED) {
                return false;
            }
            state = state.to(SessionState.CLOSED);
            unparkLocked();
            return true;
        }
    }

    private void unparkLocked() {
        for (Semaphore s : parked) {
            s.release();
        }
        parked.clear();
    }
}

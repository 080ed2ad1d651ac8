package io.disco.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The state of a {@link Disco} client at one moment, as a health check reports it: whether it has a
 * live owner in the backend (for etcd: a lease that is being renewed), which one, and how long it is
 * valid. Backend-neutral: the owner is named by the backend's own id (for etcd: the lease id in hex).
 *
 * @param state whether the client is up, healing or closed
 * @param owner the current owner's id while {@link State#UP}; empty otherwise
 * @param ttl the time to live the backend granted the current owner; zero when not {@link State#UP}
 * @param remainingValidity how long the current owner is valid from now, on the local monotonic clock;
 *     zero when not {@link State#UP}
 * @param lastProblem the last loss of an owner or the last failure to open one (a message naming the
 *     backend's endpoints and the cause), or why a closed client stopped by itself; empty while nothing
 *     went wrong since the client was created
 * @param namesInUse how many names the client keeps anything for (held, waited for, or lingering)
 */
public record DiscoStatus(
        State state,
        Optional<String> owner,
        Duration ttl,
        Duration remainingValidity,
        Optional<String> lastProblem,
        int namesInUse) {

    /** Whether a client can claim. */
    public enum State {
        /** A live owner: acquisitions are made through it. */
        UP,
        /**
         * No live owner: the last one was lost, or none could be opened yet (the backend was unreachable
         * when the client was created); the client is opening one, with backoff, and acquisitions wait
         * for it within their own timeouts and at most the owner wait, then throw
         * {@link BackendUnavailableException}. {@link DiscoStatus#lastProblem()} says why, naming the
         * endpoints once an attempt to open one has failed.
         */
        HEALING,
        /**
         * {@link Disco#close()} was called; or the application closed the backend's client before the
         * {@link Disco} ({@link DiscoBackend#clientClosed()}), and {@link DiscoStatus#lastProblem()} says so:
         * the client stopped for good.
         */
        CLOSED
    }

    /**
     * Checks the components.
     *
     * @param state whether the client is up, healing or closed
     * @param owner the current owner's id while {@link State#UP}; empty otherwise
     * @param ttl the time to live the backend granted the current owner
     * @param remainingValidity how long the current owner is valid from now
     * @param lastProblem the last loss of an owner or failure to open one; empty if none
     * @param namesInUse how many names the client keeps anything for
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a duration or {@code namesInUse} is negative
     */
    public DiscoStatus {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(remainingValidity, "remainingValidity");
        Objects.requireNonNull(lastProblem, "lastProblem");
        if (ttl.isNegative() || remainingValidity.isNegative()) {
            throw new IllegalArgumentException(
                    "ttl and remainingValidity must not be negative, got " + ttl + " and " + remainingValidity);
        }
        if (namesInUse < 0) {
            throw new IllegalArgumentException("namesInUse must not be negative, got " + namesInUse);
        }
    }
}

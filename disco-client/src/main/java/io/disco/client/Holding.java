package io.disco.client;

import io.disco.fencing.FencingToken;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One name this client holds or waits for, as {@link Disco#holdings()} lists it: what an operator
 * (an actuator endpoint, a log line) wants to see of this process. A snapshot: by the time it is
 * read, the hold may have ended.
 *
 * @param name the name, as given to the client
 * @param primitive what it is: {@code lock}, {@code read/write lock (read)}, {@code read/write lock (write)},
 *     {@code semaphore (slot 2)} (one holding per permit held), {@code election} (while leading), or the
 *     bare primitive while waiting
 * @param state whether this process holds it now or waits for it
 * @param key the backend's key of the hold (for etcd: {@code <name>/<lease id in hex>} for a lock); empty
 *     while waiting
 * @param token the hold's fencing token; empty while waiting
 * @param since when this process began to use the name without a break: its first waiter or holder,
 *     whichever came first (threads that hand the name on to one another keep it in use)
 */
public record Holding(
        String name, String primitive, State state, Optional<String> key, Optional<FencingToken> token, Instant since) {

    /** Whether the name is held by this process or waited for. */
    public enum State {
        /** A thread of this process holds it, through the client's live owner. */
        HELD,
        /** Threads of this process wait for it (or held it through an owner since lost). */
        WAITING
    }

    /**
     * Checks the components.
     *
     * @param name the name, as given to the client
     * @param primitive what it is ({@code lock}, {@code election}, ...)
     * @param state whether this process holds it now or waits for it
     * @param key the backend's key of the hold; empty while waiting
     * @param token the hold's fencing token; empty while waiting
     * @param since when this process began to use the name without a break
     * @throws NullPointerException if an argument is null
     */
    public Holding {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(primitive, "primitive");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(since, "since");
    }
}

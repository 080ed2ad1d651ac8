package io.disco.fencing;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A grant held for one critical section: closing it releases the grant (not the service, not the
 * lease), so that try-with-resources scopes a lock, a read or write hold, or a leadership term.
 *
 * <pre>{@code
 * try (Held<Grant> held = lock.hold(Duration.ofSeconds(3))) {
 *     resource.write(data, held.token());
 * }
 * }</pre>
 *
 * <p>{@link #close()} releases once; later calls do nothing. It throws what the release throws,
 * notably the loss when the grant was lost while held (a paused owner learns it here); inside
 * try-with-resources that exception is added as suppressed to one thrown by the block.
 *
 * @param <G> the grant type
 */
public final class Held<G extends Fenced> implements AutoCloseable, Fenced {

    private final G grant;
    private final Runnable release;
    private final AtomicBoolean open = new AtomicBoolean(true);

    private Held(G grant, Runnable release) {
        this.grant = Objects.requireNonNull(grant, "grant");
        this.release = Objects.requireNonNull(release, "release");
    }

    /**
     * @param grant the acquired grant
     * @param release what releases it
     * @param <G> the grant type
     * @return the held grant
     */
    public static <G extends Fenced> Held<G> of(G grant, Runnable release) {
        return new Held<>(grant, release);
    }

    /** @return the grant */
    public G grant() {
        return grant;
    }

    /** @return the grant's fencing token */
    @Override
    public FencingToken token() {
        return grant.token();
    }

    /** Releases the grant, once. */
    @Override
    public void close() {
        if (open.compareAndSet(true, false)) {
            release.run();
        }
    }

    @Override
    public String toString() {
        return "Held[" + grant + (open.get() ? "" : ", released") + "]";
    }
}

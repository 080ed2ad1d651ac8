package io.disco.client;

import io.disco.core.Primitive;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The client's entries of one primitive, as a handle uses them: join a name (making its entry with this maker if the
 * name is idle), look it up, leave it. Every join first checks that the client is still open. A handle gets this,
 * not the client: it needs nothing else of it.
 *
 * @param <E> the entry type of the primitive
 */
final class Entries<E extends Entry<?>> {

    private final Registry registry;
    private final Primitive primitive;
    private final Class<E> type;
    private final Function<String, E> maker;
    /** Throws {@link IllegalStateException} once the client is closed. */
    private final Runnable requireOpen;
    /** The client, as its {@code toString()} names it, for the handles' own. */
    private final String client;
    /** The client's observers, which the handles tell of their acquisitions and holds. */
    private final Observers observers;

    /**
     * @param registry the client's names
     * @param primitive the primitive of the entries
     * @param type their class
     * @param maker makes the entry of an idle name
     * @param requireOpen throws {@link IllegalStateException} once the client is closed
     * @param client what the handles' {@code toString()} call the client
     * @param observers the client's observers
     */
    Entries(
            Registry registry,
            Primitive primitive,
            Class<E> type,
            Function<String, E> maker,
            Runnable requireOpen,
            String client,
            Observers observers) {
        this.registry = registry;
        this.primitive = primitive;
        this.type = type;
        this.maker = maker;
        this.requireOpen = requireOpen;
        this.client = client;
        this.observers = observers;
    }

    /** @return the client's observers, for the handles to tell of their acquisitions and holds */
    Observers observers() {
        return observers;
    }

    /**
     * Counts one more user of {@code name}, making its entry if it has none.
     *
     * @throws IllegalStateException if the client is closed, the name is used as another primitive, or it is nested in
     *     (or holds) a name in use
     */
    E join(String name) {
        return join(name, e -> true);
    }

    /**
     * {@link #join(String)}, where an idle entry that does not {@code fit} (a semaphore's limit) is dropped and
     * made anew; one in use is returned as it is, for the caller to refuse.
     */
    E join(String name, Predicate<? super E> fits) {
        requireOpen.run();
        return registry.join(name, primitive, type, maker, fits);
    }

    /**
     * Joins {@code name} and acquires through its entry; leaves it again unless that acquired (it failed, or gave
     * up), so that the entry lives exactly as long as somebody holds or waits.
     *
     * @param how the acquisition through the entry: whether it holds now
     * @return what {@code how} returned
     * @throws X what {@code how} throws
     * @throws IllegalStateException as {@link #join(String)}
     */
    <X extends Exception> boolean acquire(String name, Acquisition<E, X> how) throws X {
        E e = join(name);
        boolean ok = false;
        try {
            ok = how.acquire(e);
            return ok;
        } finally {
            if (!ok) {
                leave(e);
            }
        }
    }

    /**
     * An acquisition through a joined entry, as {@link #acquire} runs it.
     *
     * @param <E> the entry type
     * @param <X> what it throws (an {@link InterruptedException} if it waits interruptibly)
     */
    interface Acquisition<E, X extends Exception> {
        /** @return whether it holds now */
        boolean acquire(E entry) throws X;
    }

    /** @return the entry of {@code name} if the name is in use as this primitive (or lingers), or null */
    E get(String name) {
        return registry.get(name, type);
    }

    /** @return the entry of {@code name} if it is held or waited for as this primitive, or null */
    E inUse(String name) {
        return registry.inUse(name, type);
    }

    /** Counts one user of {@code e} fewer. */
    void leave(E e) {
        registry.leave(e);
    }

    @Override
    public String toString() {
        return client;
    }
}

package io.disco.client;

import io.disco.core.Primitive;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The names of one client, sorted so that a name nested in another, or holding another, is found
 * among its neighbours. An entry lives from its first user's {@link #join} to its last user's
 * {@link #leave}, and then lingers idle for at least {@link #LINGER_NANOS}: a name locked again at once
 * (a loop, the next request on the same order) reuses its service instead of paying for a new one
 * (for etcd: the watch on its key). {@link #sweep} drops lingering entries after that; the client sweeps
 * every {@code LINGER_NANOS / 2}, so an idle entry is gone at most {@link #IDLE_BOUND_NANOS} (half a
 * second) after its last user left. An idle entry never stands in the way of another name or primitive, it
 * is dropped on the spot. It also keeps the lost services still closing ({@link Retirements}), under the same
 * lock, so that {@link #size()} counts a name once whether it is in use, lingering or closing.
 *
 * <p>It knows the entries, which know it only as {@link Retirements}; handles use it through {@link Entries}.
 */
final class Registry implements Retirements {

    /** How long an idle entry keeps its service at least: a third of a second. */
    static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(1) / 3;

    /**
     * How long an idle entry is kept at most: {@link #LINGER_NANOS}, then until the next sweep (the client
     * sweeps every {@code LINGER_NANOS / 2}): half a second, the bound the documentation states.
     */
    static final long IDLE_BOUND_NANOS = LINGER_NANOS + LINGER_NANOS / 2;

    /** Guards {@link #names} and every entry's user count; held for map work only, never while waiting. */
    private final ReentrantLock lock = new ReentrantLock();

    private final TreeMap<String, Entry<?>> names = new TreeMap<>();
    /** Lost services still being closed, by name: a new service of the name waits for its predecessor's close. */
    private final Map<String, CompletableFuture<Void>> retiring = new HashMap<>();

    private int idle;

    /**
     * Counts one more user of {@code name}, making its entry with {@code create} if it has none; an idle entry of
     * the primitive that does not {@code fit} (a semaphore's limit) is dropped and made anew, and one in use is
     * returned as it is, for the caller to refuse.
     *
     * @throws IllegalStateException if the name is used as another primitive, or is nested in (or holds) a name in use
     */
    <E extends Entry<?>> E join(
            String name, Primitive primitive, Class<E> type, Function<String, E> create, Predicate<? super E> fits) {
        lock.lock();
        try {
            Entry<?> e = names.get(name);
            if (e != null && e.primitive == primitive && e.users == 0 && !fits.test(type.cast(e))) {
                drop(e);
                e = null;
            }
            if (e != null && e.primitive != primitive) {
                if (e.users > 0) {
                    throw new IllegalStateException("'" + name + "' is in use by this client as a "
                            + e.label() + "; it cannot be a " + PrimitiveLabel.of(primitive)
                            + " at the same time: the two would share keys");
                }
                drop(e);
                e = null;
            }
            if (e == null) {
                clearNested(name, primitive);
                e = create.apply(name);
                names.put(name, e);
            } else if (e.users == 0) {
                idle--;
            }
            if (e.users == 0) {
                e.inUseSince = java.time.Instant.now();
            }
            e.users++;
            return type.cast(e);
        } finally {
            lock.unlock();
        }
    }

    /** Drops idle entries nested in {@code name} or holding it; refuses if one of them is in use. */
    private void clearNested(String name, Primitive primitive) {
        List<Entry<?>> nested = new ArrayList<>();
        String range = name + "/";
        for (Entry<?> under : names.subMap(range, range + Character.MAX_VALUE).values()) {
            nested.add(under);
        }
        for (int i = name.indexOf('/'); i >= 0; i = name.indexOf('/', i + 1)) {
            Entry<?> above = names.get(name.substring(0, i));
            if (above != null) {
                nested.add(above);
            }
        }
        for (Entry<?> other : nested) {
            if (other.users > 0) {
                boolean inner = other.name.length() > name.length();
                String parent = inner ? name : other.name;
                throw new IllegalStateException(PrimitiveLabel.of(primitive) + " '" + name + "' and " + other
                        + ", in use by this client, are nested:"
                        + " the keys of '" + (inner ? other.name : name) + "' lie under '" + parent
                        + "/', where a claimant of '"
                        + parent + "' queues; use names that are not nested");
            }
        }
        nested.forEach(this::drop);
    }

    /** Removes an idle entry and closes its service (cheap: nothing held, nothing claimed). */
    private void drop(Entry<?> e) {
        assert lock.isHeldByCurrentThread() && e.users == 0;
        names.remove(e.name, e);
        idle--;
        e.idle();
    }

    /** The entry of {@code name} if it is in use as a {@code type}, or null. */
    <E extends Entry<?>> E get(String name, Class<E> type) {
        lock.lock();
        try {
            Entry<?> e = names.get(name);
            return type.isInstance(e) ? type.cast(e) : null;
        } finally {
            lock.unlock();
        }
    }

    /** The entry of {@code name} if it is in use (held or waited for) as a {@code type}, or null. */
    <E extends Entry<?>> E inUse(String name, Class<E> type) {
        lock.lock();
        try {
            Entry<?> e = names.get(name);
            return type.isInstance(e) && e.users > 0 ? type.cast(e) : null;
        } finally {
            lock.unlock();
        }
    }

    /** @return the entries in use (held or waited for), in name order: a snapshot */
    List<Entry<?>> inUse() {
        lock.lock();
        try {
            List<Entry<?>> out = new ArrayList<>();
            for (Entry<?> e : names.values()) {
                if (e.users > 0) {
                    out.add(e);
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Counts one user fewer; the last one leaves the entry idle, to linger until {@link #sweep}. */
    void leave(Entry<?> e) {
        lock.lock();
        try {
            if (e.users <= 0) {
                throw new IllegalStateException("more leaves than joins for " + e);
            }
            if (--e.users == 0) {
                e.idleSinceNanos = System.nanoTime();
                idle++;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Drops the entries idle for longer than {@link #LINGER_NANOS} (all idle ones if {@code all}). */
    void sweep(boolean all) {
        lock.lock();
        try {
            if (idle == 0) {
                return;
            }
            long now = System.nanoTime();
            for (Iterator<Entry<?>> it = names.values().iterator(); it.hasNext(); ) {
                Entry<?> e = it.next();
                if (e.users == 0 && (all || now - e.idleSinceNanos >= LINGER_NANOS)) {
                    it.remove();
                    idle--;
                    e.idle();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void retire(String name, CompletableFuture<Void> closing) {
        lock.lock();
        try {
            retiring.put(name, closing);
        } finally {
            lock.unlock();
        }
        closing.whenComplete((v, e) -> {
            lock.lock();
            try {
                retiring.remove(name, closing);
            } finally {
                lock.unlock();
            }
        });
    }

    @Override
    public CompletableFuture<Void> retiring(String name) {
        lock.lock();
        try {
            CompletableFuture<Void> f = retiring.get(name);
            return f == null || f.isDone() ? null : f;
        } finally {
            lock.unlock();
        }
    }

    /** @return how many names the client keeps anything for: in use, lingering, or a lost service closing */
    int size() {
        lock.lock();
        try {
            return names.size() + retiring.size();
        } finally {
            lock.unlock();
        }
    }
}

package io.disco.client;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The names in use by one client (held or waited for), sorted so that a name nested in another, or
 * holding another, is found among its neighbours. An entry lives from its first user's
 * {@link #join} to its last user's {@link #leave}; nothing is kept for a name nobody uses.
 */
final class Registry {

    /** Guards {@link #names} and every entry's user count; held for map work only, never while waiting. */
    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<String, Entry<?>> names = new TreeMap<>();
    /** Lost services still being closed, by name: a new service of the name waits for its predecessor's close. */
    private final Map<String, CompletableFuture<Void>> retiring = new HashMap<>();

    /**
     * Counts one more user of {@code name}, making its entry if it has none.
     *
     * @throws IllegalStateException if the name is used as another kind, or is nested in (or holds) a name in use
     */
    <E extends Entry<?>> E join(String name, Kind kind, Class<E> type, Function<String, E> create) {
        lock.lock();
        try {
            Entry<?> e = names.get(name);
            if (e == null) {
                refuseNested(name, kind);
                e = create.apply(name);
                names.put(name, e);
            } else if (e.kind != kind) {
                throw new IllegalStateException("'" + name + "' is in use by this client as a " + e.kind + "; it cannot be a "
                        + kind + " at the same time: the two would share keys");
            }
            e.users++;
            return type.cast(e);
        } finally {
            lock.unlock();
        }
    }

    private void refuseNested(String name, Kind kind) {
        String range = name + "/";
        Map.Entry<String, Entry<?>> after = names.ceilingEntry(range);
        Entry<?> other = after != null && after.getKey().startsWith(range) ? after.getValue() : null;
        for (int i = name.indexOf('/'); other == null && i >= 0; i = name.indexOf('/', i + 1)) {
            other = names.get(name.substring(0, i));
        }
        if (other != null) {
            boolean inner = other.name.length() > name.length();
            String parent = inner ? name : other.name;
            throw new IllegalStateException(kind + " '" + name + "' and " + other + ", in use by this client, are nested: the keys of '"
                    + (inner ? other.name : name) + "' lie under '" + parent + "/', where a claimant of '" + parent
                    + "' queues; use names that are not nested");
        }
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

    /** Counts one user fewer; the last one drops the entry and closes its service. */
    void leave(Entry<?> e) {
        boolean idle;
        lock.lock();
        try {
            if (e.users <= 0) {
                throw new IllegalStateException("more leaves than joins for " + e);
            }
            idle = --e.users == 0;
            if (idle) {
                names.remove(e.name, e);
                e.idle(); // under the lock: a new entry of the name must not meet this one's service on the owner
            }
        } finally {
            lock.unlock();
        }
    }

    /** Records that a lost service of {@code name} is closing; forgotten once closed. */
    void retire(String name, CompletableFuture<Void> closing) {
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

    /** @return the close of a lost service of {@code name} still in progress, or null */
    CompletableFuture<Void> retiring(String name) {
        lock.lock();
        try {
            CompletableFuture<Void> f = retiring.get(name);
            return f == null || f.isDone() ? null : f;
        } finally {
            lock.unlock();
        }
    }

    /** @return how many names are in use */
    int size() {
        lock.lock();
        try {
            return names.size() + retiring.size();
        } finally {
            lock.unlock();
        }
    }
}

package io.disco.client;

import io.disco.semaphore.SemaphoreService;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The semaphore services of one name on one owner: the unit a {@link SemaphoreEntry} claims through (its
 * {@link Entry} service). Each acquisition takes an idle service, or has the owner make one more (for etcd: one
 * more holder key on the same lease), and gives it back when its permit is released or it gives up; so the
 * services number at most the permits held and waited for at once. A service is idle (nothing held, nothing
 * claimed) while it is in {@link #idle}; one that was lost is closed, never reused. All are closed when the name
 * falls idle or the owner is lost.
 */
final class SemaphoreHolders {

    final DiscoBackend.Owner owner;
    /** Told, off the backend's threads, when a service made here finishes (its owner lost, or closed). */
    private final Consumer<SemaphoreService> ended;
    /** Guards the fields below; never held while calling the backend. */
    private final ReentrantLock lock = new ReentrantLock();

    private final ArrayDeque<SemaphoreService> idle = new ArrayDeque<>();
    private final List<SemaphoreService> all = new ArrayList<>();
    private boolean closed;

    SemaphoreHolders(DiscoBackend.Owner owner, Consumer<SemaphoreService> ended) {
        this.owner = owner;
        this.ended = ended;
    }

    /**
     * An idle service, or a new one on the owner.
     *
     * @throws IllegalArgumentException if the name's recorded limit is another
     * @throws IllegalStateException if the owner is lost or closed, or these holders are closed
     */
    SemaphoreService take(String name, int permits) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("semaphore '" + name + "' is no longer in use on this owner");
            }
            SemaphoreService s = idle.pollFirst();
            if (s != null) {
                return s;
            }
        } finally {
            lock.unlock();
        }
        SemaphoreService made = owner.newSemaphore(name, permits);
        made.done().thenRun(() -> ended.accept(made));
        lock.lock();
        try {
            if (!closed) {
                all.add(made);
                return made;
            }
        } finally {
            lock.unlock();
        }
        made.close(); // nothing held, nothing claimed
        throw new IllegalStateException("semaphore '" + name + "' is no longer in use on this owner");
    }

    /** Takes back a service whose permit is released or whose acquisition gave up; a lost one is closed. */
    void giveBack(SemaphoreService s) {
        lock.lock();
        try {
            if (!closed && s.err().isEmpty()) {
                idle.addFirst(s); // the most recently used first: its own-key watch is warm
                return;
            }
            all.remove(s);
        } finally {
            lock.unlock();
        }
        s.closeAsync();
    }

    /** @return the services, closed from now on; the caller closes them */
    private List<SemaphoreService> end() {
        lock.lock();
        try {
            closed = true;
            idle.clear();
            List<SemaphoreService> services = new ArrayList<>(all);
            all.clear();
            return services;
        } finally {
            lock.unlock();
        }
    }

    void close() {
        end().forEach(SemaphoreService::close);
    }

    CompletableFuture<Void> closeAsync() {
        return CompletableFuture.allOf(
                end().stream().map(SemaphoreService::closeAsync).toArray(CompletableFuture[]::new));
    }
}

package io.disco.client;

import java.time.Instant;
import io.disco.fencing.DiscoException;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A semaphore name in use: the permits held through it, each with the per-owner service that holds it
 * (a semaphore service holds one permit), and the services of the current owner ({@link Holders}).
 * Every acquisition takes an idle service of the owner, or has the owner make one more (for etcd: one
 * more holder key on the same lease), and gives it back when its permit is released or the acquisition
 * gives up; so the services of a name number at most the permits held and waited for at once, and all
 * of them are closed when the name falls idle.
 */
final class SemaphoreEntry extends Entry<SemaphoreEntry.Holders> {

    /**
     * The semaphore services of this name on one owner. A service is idle (nothing held, nothing
     * claimed) while it is in {@link #idle}; one that was lost is closed, never reused.
     */
    static final class Holders {

        final DiscoBackend.Owner owner;
        /** Told, off the backend's threads, when a service made here finishes (its owner lost, or closed). */
        private final Consumer<SemaphoreService> ended;
        /** Guards the fields below; never held while calling the backend. */
        private final ReentrantLock lock = new ReentrantLock();
        private final ArrayDeque<SemaphoreService> idle = new ArrayDeque<>();
        private final List<SemaphoreService> all = new ArrayList<>();
        private boolean closed;

        Holders(DiscoBackend.Owner owner, Consumer<SemaphoreService> ended) {
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
            return CompletableFuture.allOf(end().stream().map(SemaphoreService::closeAsync).toArray(CompletableFuture[]::new));
        }
    }

    /** A held permit's service, the holders it goes back to, and the end of the hold (released or lost). */
    private record Hold(SemaphoreService service, Holders holders, CompletableFuture<Void> ended) {

        Hold(SemaphoreService service, Holders holders) {
            this(service, holders, new CompletableFuture<>());
        }
    }

    final int permits;
    /** The permits held through this entry. */
    private final ConcurrentHashMap<Permit, Hold> held = new ConcurrentHashMap<>();

    SemaphoreEntry(Engine engine, String name, int permits) {
        super(engine, name, Kind.SEMAPHORE);
        this.permits = permits;
    }

    @Override
    List<Holding> held(Holders holders, Instant since) {
        return held.keySet().stream()
                .sorted(java.util.Comparator.comparingInt(Permit::slot))
                .map(p -> new Holding(name, kind + " (slot " + p.slot() + ")", Holding.State.HELD, Optional.of(p.key()),
                        Optional.of(p.token()), since))
                .toList();
    }

    @Override
    Holders newService(DiscoBackend.Owner owner) {
        return new Holders(owner, this::serviceEnded);
    }

    @Override
    boolean isLost(Holders holders) {
        return holders.owner.err().isPresent();
    }

    @Override
    void close(Holders holders) {
        holders.close();
    }

    @Override
    CompletableFuture<Void> closeAsync(Holders holders) {
        return holders.closeAsync();
    }

    // ------------------------------------------------------------------ acquiring

    /**
     * Acquires one permit through the owner of the moment; an acquisition lost while it waited held
     * nothing and claims again through the next owner.
     *
     * @param wait {@link Wait#INTERRUPTIBLY} (until {@code deadline}, or for ever with {@link Long#MAX_VALUE})
     *     or {@link Wait#NOT_AT_ALL}
     * @return the permit, or null if not acquired (try only)
     */
    Permit acquire(Wait wait, long deadline) throws InterruptedException, TimeoutException {
        Holders lostBefore = null; // the holders whose owner was lost under this acquisition, if any
        while (true) {
            Holders holders = RWEntry.await(service(), wait, deadline);
            if (holders == lostBefore) {
                throw lost(holders.owner.err().orElse(null)); // the owner is finished, and not replaced yet
            }
            SemaphoreService s;
            try {
                s = holders.take(name, permits);
            } catch (IllegalStateException e) {
                if (isLost(holders)) {
                    lostBefore = holders;
                    continue;
                }
                throw e;
            }
            Permit permit = null;
            try {
                permit = claim(s, wait, deadline);
                if (permit != null) {
                    hold(permit, new Hold(s, holders));
                }
                return permit;
            } catch (SemaphoreLostException e) {
                // The owner's loss, seen by this claim first, or only this service's key deleted: a new one claims.
                lostMeanwhile(holders, wait, deadline);
                lostBefore = isLost(holders) ? holders : null;
            } catch (DiscoException e) {
                if (!lostMeanwhile(holders, wait, deadline)) {
                    throw e; // for etcd: a claim on a revoked lease fails with "lease not found" before the loss is known
                }
                lostBefore = holders;
            } finally {
                if (permit == null) {
                    holders.giveBack(s);
                }
            }
        }
    }

    private static Permit claim(SemaphoreService s, Wait wait, long deadline) throws InterruptedException, TimeoutException {
        if (wait == Wait.NOT_AT_ALL) {
            return s.tryAcquire().orElse(null);
        }
        if (deadline == Long.MAX_VALUE) {
            return s.acquire();
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new TimeoutException("no permit of semaphore within the timeout");
        }
        return s.acquire(Duration.ofNanos(left));
    }

    /** As {@code RWEntry.lostMeanwhile}: whether a claim's failure turns out to be the owner's loss within a second. */
    private static boolean lostMeanwhile(Holders holders, Wait wait, long deadline) throws InterruptedException {
        long grace = TimeUnit.SECONDS.toNanos(1);
        if (wait == Wait.NOT_AT_ALL) {
            grace = 0;
        } else if (deadline != Long.MAX_VALUE) {
            grace = Math.min(grace, deadline - System.nanoTime());
        }
        if (grace > 0) {
            try {
                holders.owner.done().toCompletableFuture().get(grace, TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // not finished: the failure stands
            }
        }
        return holders.owner.err().isPresent();
    }

    /** {@link #lostMeanwhile} without blocking: completes once the owner is lost, or after a second. */
    private static CompletableFuture<Void> lostMeanwhileAsync(Holders holders) {
        CompletableFuture<Void> settled = new CompletableFuture<>();
        holders.owner.done().thenRun(() -> settled.complete(null));
        CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> settled.complete(null));
        return settled;
    }

    /**
     * {@link #acquire} without blocking. {@code out} completes with the permit, or fails; cancelling it
     * withdraws the claim, and a permit granted at that instant is released. The service is taken off
     * the thread that completed the owner (making one may ask the backend), on the common pool.
     */
    void acquireAsync(CompletableFuture<Permit> out) {
        attemptAsync(out, null);
    }

    private void attemptAsync(CompletableFuture<Permit> out, Holders lostBefore) {
        service().whenCompleteAsync((holders, failure) -> {
            if (out.isDone()) {
                return; // cancelled meanwhile
            }
            if (failure != null) {
                out.completeExceptionally(unwrap(failure));
                return;
            }
            if (holders == lostBefore) {
                out.completeExceptionally(lost(holders.owner.err().orElse(null)));
                return;
            }
            SemaphoreService s;
            try {
                s = holders.take(name, permits);
            } catch (IllegalStateException e) {
                if (isLost(holders)) {
                    attemptAsync(out, holders);
                } else {
                    out.completeExceptionally(e);
                }
                return;
            } catch (RuntimeException e) {
                out.completeExceptionally(e);
                return;
            }
            CompletableFuture<Permit> claim = s.acquireAsync();
            out.whenComplete((p, e) -> {
                if (out.isCancelled()) {
                    claim.cancel(true);
                }
            });
            claim.whenComplete((permit, e) -> {
                if (e == null) {
                    hold(permit, new Hold(s, holders));
                    if (!out.complete(permit)) { // cancelled as it was granted: give it back
                        held.remove(permit);
                        s.releaseAsync().whenComplete((v, re) -> holders.giveBack(s));
                    }
                    return;
                }
                holders.giveBack(s);
                Throwable cause = unwrap(e);
                if (out.isDone()) {
                    return;
                }
                if (!(cause instanceof DiscoException)) {
                    out.completeExceptionally(cause);
                    return;
                }
                // The owner's loss may be known a moment after the claim failed (see acquire).
                lostMeanwhileAsync(holders).whenComplete((v, x) -> {
                    if (isLost(holders)) {
                        attemptAsync(out, holders);
                    } else if (cause instanceof SemaphoreLostException) {
                        attemptAsync(out, null);
                    } else {
                        out.completeExceptionally(cause);
                    }
                });
            });
        });
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    private SemaphoreLostException lost(Throwable cause) {
        return new SemaphoreLostException("semaphore '" + name + "': the client's owner was lost and not replaced yet", cause);
    }

    // ------------------------------------------------------------------ held permits

    /** Records a held permit; a permit whose service finished at that instant ends at once. */
    private void hold(Permit permit, Hold h) {
        held.put(permit, h);
        if (h.service().err().isPresent()) {
            h.ended().complete(null);
        }
    }

    /** A service finished (its owner lost, or closed): the hold of its permit, if any, ends. */
    private void serviceEnded(SemaphoreService s) {
        for (Hold h : held.values()) {
            if (h.service() == s) {
                h.ended().complete(null);
            }
        }
    }

    /** @return whether {@code permit} is held through this entry */
    boolean holds(Permit permit) {
        return held.containsKey(permit);
    }

    private SemaphoreService holder(Permit permit) {
        Hold h = held.get(permit);
        if (h == null) {
            throw notHeld(permit);
        }
        return h.service();
    }

    private IllegalArgumentException notHeld(Permit permit) {
        return new IllegalArgumentException(permit + " is not held through this client on semaphore '" + name
                + "' (released already, or acquired elsewhere)");
    }

    /**
     * Releases {@code permit}.
     *
     * @return normally once the permit is no longer held (released, or lost: then the loss is thrown)
     * @throws IllegalArgumentException if it is not held here
     * @throws DiscoException (not a loss) if the backend failed: when it refused the release the permit is
     *     still held (retry); when it did not answer in time the permit is given up (its service goes back
     *     to the pool, and hands out nothing before the release is confirmed)
     */
    void release(Permit permit) {
        Hold h = held.remove(permit);
        if (h == null) {
            throw notHeld(permit);
        }
        boolean ended = false;
        try {
            h.service().release();
            ended = true;
        } catch (SemaphoreLostException e) {
            ended = true;
            throw new SemaphoreLostException("permit " + permit.guardKey() + " (token " + permit.token().value()
                    + ") of semaphore '" + name + "' was lost before its release: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            ended = h.service().held().filter(p -> p.token().equals(permit.token())).isEmpty(); // given up, not refused
            throw e;
        } finally {
            if (ended) {
                h.ended().completeAsync(() -> null); // off the releasing thread
                h.holders().giveBack(h.service());
            } else {
                held.put(permit, h); // still held: the caller may retry
            }
        }
    }

    CompletionStage<Void> done(Permit permit) {
        Hold h = held.get(permit);
        if (h == null) {
            throw notHeld(permit);
        }
        return h.ended().minimalCompletionStage();
    }

    Optional<SemaphoreLostException> err(Permit permit) {
        return holder(permit).err();
    }
}

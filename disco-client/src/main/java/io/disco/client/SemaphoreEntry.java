package io.disco.client;

import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A semaphore name in use: the permits held through it, each with the per-owner service that holds it
 * (a semaphore service holds one permit), and the services of the current owner ({@link SemaphoreHolders}),
 * which is what it claims through. Its duties: acquire a permit (blocking, with {@link SelfHealingClaim}, or
 * without blocking, {@link #acquireAsync}), record the held permits and end their holds when their service
 * finishes, and release them. All of its services are closed when the name falls idle.
 */
final class SemaphoreEntry extends Entry<SemaphoreHolders> {

    /**
     * A held permit's service, the holders it goes back to, the end of the hold (released or lost), and the
     * observers' view of it: set by the acquisition once it has recorded the hold, and told by its release here or,
     * when its service ends first, by {@link #ended} on the service's callback executor.
     */
    private static final class Hold {
        final SemaphoreService service;
        final SemaphoreHolders holders;
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        volatile HoldWatch watch = HoldWatch.OFF;

        Hold(SemaphoreService service, SemaphoreHolders holders) {
            this.service = service;
            this.holders = holders;
        }

        /** The acquisition was granted: from now on the observers see the hold, also if it ended meanwhile. */
        void watch(HoldWatch w) {
            watch = w;
            w.endsWith(ended, service);
        }
    }

    final int permits;
    /** The permits held through this entry. */
    private final ConcurrentHashMap<Permit, Hold> held = new ConcurrentHashMap<>();

    /** How a permit is claimed: through the holders of the owner of the moment, again after a loss. */
    private final Claims claims = new Claims();

    SemaphoreEntry(
            String name,
            int permits,
            Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner,
            Retirements retirements) {
        super(name, Primitive.SEMAPHORE, currentOwner, retirements);
        this.permits = permits;
    }

    @Override
    List<Holding> held(SemaphoreHolders holders, Instant since) {
        return held.keySet().stream()
                .sorted(Comparator.comparingInt(Permit::slot))
                .map(p -> hold(label() + " (slot " + p.slot() + ")", p.key(), p.token(), since))
                .toList();
    }

    @Override
    SemaphoreHolders newService(DiscoBackend.Owner owner) {
        return new SemaphoreHolders(owner, this::serviceEnded);
    }

    @Override
    boolean isLost(SemaphoreHolders holders) {
        return holders.owner.err().isPresent();
    }

    @Override
    void close(SemaphoreHolders holders) {
        holders.close();
    }

    @Override
    CompletableFuture<Void> closeAsync(SemaphoreHolders holders) {
        return holders.closeAsync();
    }

    // ------------------------------------------------------------------ acquiring

    /**
     * Acquires one permit through the owner of the moment, with {@link SelfHealingClaim}: an acquisition lost
     * while it waited held nothing and claims again through the next owner.
     *
     * @param wait {@link Wait#INTERRUPTIBLY} (until {@code deadline}, or for ever with {@link Long#MAX_VALUE})
     *     or {@link Wait#NOT_AT_ALL}
     * @param watch the acquisition's watch, told the permit
     * @return the permit, or null if not acquired (try only)
     */
    Permit acquire(Wait wait, long deadline, AttemptWatch watch) throws InterruptedException, TimeoutException {
        SelfHealingClaim.Granted<SemaphoreHolders, Permit> g = SelfHealingClaim.claim(claims, wait, deadline);
        if (g == null) {
            return null;
        }
        Permit permit = g.grant();
        granted(permit, watch);
        return permit;
    }

    /** Tells {@code watch} of {@code permit}, recorded and not yet handed out, and the permit's hold to watch it. */
    private void granted(Permit permit, AttemptWatch watch) {
        HoldWatch w = watch.granted(permit);
        if (w.isOn()) {
            Hold h = held.get(permit);
            if (h != null) {
                h.watch(w);
            }
        }
    }

    /**
     * The semaphore's hooks of {@link SelfHealingClaim}: the unit is the name's holders on one owner, lost with
     * that owner; each claim takes a service of its own from them and gives it back unless it holds a permit, so
     * a claim's {@link SemaphoreLostException} may be that service's loss only (its key deleted), after which a
     * new service claims through the same holders.
     */
    private final class Claims implements SelfHealingClaim.Target<SemaphoreHolders, Permit> {

        @Override
        public CompletableFuture<SemaphoreHolders> unit() {
            return service();
        }

        @Override
        public Permit claim(SemaphoreHolders holders, Wait wait, long deadline)
                throws InterruptedException, TimeoutException {
            SemaphoreService s;
            try {
                s = holders.take(name, permits);
            } catch (IllegalStateException e) {
                if (isLost(holders)) {
                    throw lost(
                            e); // no service to take: the owner is lost (the loop finds it so once the owner's end is
                    // delivered)
                }
                throw e;
            }
            Permit permit = null;
            try {
                permit = wait.claim(deadline, s::tryAcquire, s::acquire, s::acquire, s::acquireAsync);
                if (permit != null) {
                    hold(permit, new Hold(s, holders));
                }
                return permit;
            } finally {
                if (permit == null) {
                    holders.giveBack(s);
                }
            }
        }

        @Override
        public boolean isLost(SemaphoreHolders holders) {
            return SemaphoreEntry.this.isLost(holders);
        }

        @Override
        public CompletionStage<?> ended(SemaphoreHolders holders) {
            return holders.owner.done();
        }

        @Override
        public SelfHealingClaim.Failure failure(SemaphoreHolders holders, RuntimeException e) {
            if (e instanceof SemaphoreLostException) {
                return SelfHealingClaim.Failure
                        .CLAIM_LOST; // the owner's loss, seen by this claim first, or only its service's key deleted
            }
            if (e instanceof DiscoException) {
                return SelfHealingClaim.Failure
                        .MAYBE_UNIT_LOST; // for etcd: a claim on a revoked lease fails with "lease not found" first
            }
            return SelfHealingClaim.Failure.FAILED;
        }

        @Override
        public RuntimeException finished(SemaphoreHolders holders) {
            return lost(holders.owner.err().orElse(null)); // the owner is finished, and not replaced yet
        }
    }

    /** The grace of {@link SelfHealingClaim} without blocking: completes once the owner is lost, or after a second. */
    private static CompletableFuture<Void> lostMeanwhileAsync(SemaphoreHolders holders) {
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
    void acquireAsync(CompletableFuture<Permit> out, AttemptWatch watch) {
        attemptAsync(out, null, watch);
    }

    private void attemptAsync(CompletableFuture<Permit> out, SemaphoreHolders lostBefore, AttemptWatch watch) {
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
                    attemptAsync(out, holders, watch);
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
                    granted(permit, watch); // before the future's dependents, which may release it
                    if (!out.complete(permit)) { // cancelled as it was granted: give it back
                        held.remove(permit).watch.released();
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
                        attemptAsync(out, holders, watch);
                    } else if (cause instanceof SemaphoreLostException) {
                        attemptAsync(out, null, watch);
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
        return new SemaphoreLostException(
                "semaphore '" + name + "': the client's owner was lost and not replaced yet", cause);
    }

    // ------------------------------------------------------------------ held permits

    /** Records a held permit; a permit whose service finished at that instant ends at once. */
    private void hold(Permit permit, Hold h) {
        held.put(permit, h);
        if (h.service.err().isPresent()) {
            h.ended.complete(null);
        }
    }

    /** A service finished (its owner lost, or closed): the hold of its permit, if any, ends. */
    private void serviceEnded(SemaphoreService s) {
        for (Hold h : held.values()) {
            if (h.service == s) {
                h.ended.complete(null);
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
        return h.service;
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
            h.service.release();
            ended = true;
            h.watch.released();
        } catch (SemaphoreLostException e) {
            ended = true;
            SemaphoreLostException lost = new SemaphoreLostException(
                    "permit " + permit.guardKey() + " (token " + permit.token().value() + ") of semaphore '" + name
                            + "' was lost before its release: " + e.getMessage(),
                    e);
            h.watch.lost(lost);
            throw lost;
        } catch (RuntimeException e) {
            ended = h.service
                    .held()
                    .filter(p -> p.token().equals(permit.token()))
                    .isEmpty(); // given up, not refused
            if (ended) {
                h.watch.lost(e); // the release did not complete: given up
            }
            throw e;
        } finally {
            if (ended) {
                h.ended.completeAsync(() -> null); // off the releasing thread
                h.holders.giveBack(h.service);
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
        return h.ended.minimalCompletionStage();
    }

    Optional<SemaphoreLostException> err(Permit permit) {
        return holder(permit).err();
    }
}

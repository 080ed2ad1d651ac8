package io.disco.client;

import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The state the client keeps for one name while anybody holds it or waits for it: the local queue
 * (in a subclass) and the name's service on the current owner. Its duties: hand out the service to claim
 * through ({@link #service()}: the current one, or a new one on the owner of the moment once a lost one has
 * closed), retire a lost service, close its service when it falls idle, and list its holds. Made by
 * {@link Registry#join} and dropped, with its service closed, when the last user leaves and it has lingered.
 * It gets what it needs of the client, not the client: the owner of the moment and the {@link Retirements}.
 *
 * @param <S> the service type
 */
abstract class Entry<S> {

    final String name;
    /** What the name is used as: one primitive at a time. */
    final Primitive primitive;
    /** The client's owner of the moment: pending while there is none, failed once the client is closed or the owner wait passed. */
    private final Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner;
    /** The lost services of the client's names still closing. */
    private final Retirements retirements;
    /** Holders and waiters, counted per acquisition call; guarded by the registry's lock. */
    int users;
    /** When {@link #users} last fell to 0; guarded by the registry's lock. */
    long idleSinceNanos;
    /** When {@link #users} last rose from 0, for {@link #holding()}. */
    volatile Instant inUseSince = Instant.now();
    /** Guards {@link #service}; never held while waiting for the backend. */
    private final ReentrantLock serviceLock = new ReentrantLock();

    private S service;
    /** Set when the entry falls idle: a late answer must not make a service nobody will close. */
    private boolean dropped;

    Entry(
            String name,
            Primitive primitive,
            Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner,
            Retirements retirements) {
        this.name = name;
        this.primitive = primitive;
        this.currentOwner = currentOwner;
        this.retirements = retirements;
    }

    /** @return the grants {@code service} holds now (a semaphore's: one per permit), as holds for {@link #holdings()} */
    abstract List<Holding> held(S service, Instant since);

    /** @return the service whose holds {@link #holdings()} lists: this entry's, unless a subclass keeps another */
    S serviceForHoldings() {
        serviceLock.lock();
        try {
            return service;
        } finally {
            serviceLock.unlock();
        }
    }

    /**
     * @return this name's holds (if the current service holds) or, when it holds nothing, one wait; for
     *     {@link Disco#holdings()}
     */
    final List<Holding> holdings() {
        S s = serviceForHoldings();
        Instant since = inUseSince;
        List<Holding> h = s == null ? List.of() : held(s, since);
        return h.isEmpty()
                ? List.of(new Holding(name, label(), Holding.State.WAITING, Optional.empty(), Optional.empty(), since))
                : h;
    }

    /** @return what the name is used as, in the primitive's word ({@link PrimitiveLabel}) */
    final String label() {
        return PrimitiveLabel.of(primitive);
    }

    /** @return a hold of this name, for {@link #held}: {@code what} it is ({@link #label()}, with a detail for some) */
    final Holding hold(String what, String key, FencingToken token, Instant since) {
        return new Holding(name, what, Holding.State.HELD, Optional.of(key), Optional.of(token), since);
    }

    /** Makes this entry's service on {@code owner}. */
    abstract S newService(DiscoBackend.Owner owner);

    /** @return whether {@code service} was lost with its owner */
    abstract boolean isLost(S service);

    abstract void close(S service);

    /** Closes a lost service without waiting (its withdrawal may wait for the backend). */
    abstract CompletableFuture<Void> closeAsync(S service);

    /** Retires a lost service: closed in the background; the next service of the name waits for it. */
    private void retire(S lost) {
        retirements.retire(name, closeAsync(lost).exceptionally(e -> null));
    }

    /**
     * The service to claim through: the current one, or (after a loss, or the first time) a new one
     * on the client's current owner, once there is one. Lock order: the registry's lock may be taken
     * before this entry's, never after, so nothing below calls the registry while holding it.
     */
    final CompletableFuture<S> service() {
        serviceLock.lock();
        try {
            if (service != null && !isLost(service)) {
                return CompletableFuture.completedFuture(service);
            }
        } finally {
            serviceLock.unlock();
        }
        return currentOwner.get().thenCompose(this::serviceOn);
    }

    private CompletableFuture<S> serviceOn(DiscoBackend.Owner owner) {
        CompletableFuture<Void> predecessor = retirements.retiring(name);
        if (predecessor != null) { // a lost service of this name still holds its place on the owner
            return predecessor.thenCompose(v -> serviceOn(owner));
        }
        S lost = null;
        serviceLock.lock();
        try {
            if (dropped) {
                return CompletableFuture.failedFuture(new IllegalStateException(this + " is no longer in use"));
            }
            if (service != null && !isLost(service)) {
                return CompletableFuture.completedFuture(service);
            }
            if (service != null) {
                lost = service;
                service = null;
            } else {
                try {
                    service = newService(owner);
                    return CompletableFuture.completedFuture(service);
                } catch (IllegalStateException e) {
                    if (owner.err().isEmpty()) {
                        throw e;
                    }
                    // lost since: wait for the next owner, below
                }
            }
        } finally {
            serviceLock.unlock();
        }
        if (lost != null) {
            retire(lost);
            return serviceOn(owner);
        }
        return currentOwner.get().thenCompose(this::serviceOn);
    }

    /** Dropped by the registry, idle: close the service (cheap: nothing is held or claimed). */
    final void idle() {
        S s;
        serviceLock.lock();
        try {
            s = service;
            service = null;
            dropped = true;
        } finally {
            serviceLock.unlock();
        }
        if (s != null) {
            if (isLost(s)) {
                retire(s);
            } else {
                close(s); // nothing held, nothing claimed: no request to the backend
            }
        }
    }

    @Override
    public String toString() {
        return label() + " '" + name + "'";
    }
}

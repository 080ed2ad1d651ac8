package io.disco.client;

import io.disco.barrier.Barrier;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The client's {@link Barrier}: each call goes through the owner of the moment's {@link Barriers}; a wait that sees
 * its owner end waits again through the next one (the barrier's key belongs to no owner), or fails if the client
 * closed.
 */
final class ClientBarrier implements Barrier {

    private final String name;
    private final CurrentOwner owner;

    ClientBarrier(String name, CurrentOwner owner) {
        this.name = name;
        this.owner = owner;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean hold() {
        return request(b -> b.raise(name));
    }

    @Override
    public boolean release() {
        return request(b -> b.lower(name));
    }

    @Override
    public boolean isHeld() {
        return request(b -> b.isUp(name));
    }

    /** One request through the owner of the moment, waiting for one as acquisitions do (at most the owner wait). */
    private boolean request(Function<Barriers, CompletableFuture<Boolean>> step) {
        owner.requireOpen();
        try {
            DiscoBackend.Owner o = Wait.UNINTERRUPTIBLY.await(owner.owner(), Long.MAX_VALUE);
            return Wait.UNINTERRUPTIBLY.await(step.apply(o.barriers()), Long.MAX_VALUE);
        } catch (InterruptedException | TimeoutException impossible) { // not thrown by an uninterruptible wait
            throw new IllegalStateException(impossible);
        }
    }

    @Override
    public void await() throws InterruptedException {
        awaitUntil(Long.MAX_VALUE);
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        if (Timeouts.tryOnly(timeout)) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return !isHeld();
        }
        return awaitUntil(OwnerRace.deadline(timeout));
    }

    private boolean awaitUntil(long deadline) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        owner.requireOpen();
        while (true) {
            DiscoBackend.Owner o;
            try {
                o = Wait.INTERRUPTIBLY.await(owner.owner(), deadline);
            } catch (TimeoutException e) {
                return false;
            }
            CompletableFuture<Void> down = o.barriers().lowered(name);
            try {
                if (OwnerRace.await(down, o, deadline)) {
                    return true;
                }
            } catch (TimeoutException e) {
                return false;
            }
            owner.requireOpen(); // the owner ended: closed with the client, or lost (then through the next one)
        }
    }

    @Override
    public String toString() {
        return "Barrier[" + name + "]";
    }
}

package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;

/**
 * {@link FencedLock#lockAsync()}: a lock's ownership is a thread's, so an asynchronous acquisition has a
 * thread of its own (a daemon, made for it) that waits in the lock's queue like any other thread, holds the
 * lock while the {@link Held} is open, and unlocks when it is closed, whoever closes it. That thread runs no
 * user code (but the client's {@link AcquisitionObserver}s, which must not block, as on any acquiring thread): the
 * future is completed on the common pool, so a dependent stage that closes the hold never waits for itself. The
 * acquisition's watch is started by the caller, on its own thread, before this one starts; a cancelled future
 * ends it as {@link AcquisitionObserver.Outcome#CANCELLED}.
 *
 * <p>Why nothing is left behind: the thread acquires with {@code lockInterruptibly()}, which withdraws the
 * claim when interrupted, and the future's cancellation (or any exceptional completion by the caller)
 * interrupts it; a hold acquired just as the future was cancelled is released at once by the thread, which
 * learns it when its own completion of the future fails.
 */
final class AsyncAcquisition implements FencedHold {

    private final FencedLock lock;
    /** The thread's acquisition: the lock's {@code lockInterruptibly()}, under the caller's watch. */
    private final Acquire acquire;

    private final Thread thread;
    private final CompletableFuture<Held<FencedHold>> result = new CompletableFuture<>();
    /** Completed by the hold's close. */
    private final CompletableFuture<Void> closeRequested = new CompletableFuture<>();
    /** Completed by the thread once it has unlocked, exceptionally with what the unlock threw. */
    private final CompletableFuture<Void> released = new CompletableFuture<>();
    /** The hold's loss, recorded by the thread (which owns the lock, so may ask it) once done() completes or it unlocked. */
    private final CompletableFuture<Optional<? extends DiscoException>> loss = new CompletableFuture<>();

    private volatile FencingToken token;
    private volatile CompletableFuture<Void> done;
    /** {@link #done()}: the lock's done(), or the release (completed on the common pool: this thread runs no user code). */
    private final CompletableFuture<Void> ended = new CompletableFuture<>();

    /** An interruptible acquisition of the lock by the calling thread. */
    @FunctionalInterface
    interface Acquire {
        /** Acquires as {@code lockInterruptibly()} does. */
        void acquire() throws InterruptedException;
    }

    private AsyncAcquisition(FencedLock lock, Acquire acquire) {
        this.lock = lock;
        this.acquire = acquire;
        this.thread = new Thread(this::run, "disco-async-hold " + lock);
        thread.setDaemon(true);
    }

    /**
     * @param lock the lock, for the hold's token, end, loss and unlock
     * @param watch the acquisition's watch, started by the caller ({@link AttemptWatch#OFF} without observers)
     * @param acquire the thread's acquisition of {@code lock}, under {@code watch}
     * @return the pending hold
     */
    static CompletableFuture<Held<FencedHold>> start(FencedLock lock, AttemptWatch watch, Acquire acquire) {
        AsyncAcquisition a = new AsyncAcquisition(lock, acquire);
        a.result.whenComplete((h, e) -> {
            if (e != null) {
                watch.failed(e); // cancelled by the caller (a failure of the acquisition has told it already)
                a.thread.interrupt(); // cancelled or failed by the caller: withdraw (a no-op once the thread has
                // returned)
            }
        });
        a.thread.start();
        return a.result;
    }

    private void run() {
        try {
            acquire.acquire();
        } catch (InterruptedException e) {
            result.completeExceptionally(new CancellationException("the acquisition of " + lock + " was cancelled"));
            return;
        } catch (RuntimeException | Error e) {
            result.completeExceptionally(e);
            return;
        }
        try {
            token = lock.token();
            done = lock.done().toCompletableFuture();
            done.whenComplete((v, e) -> ended.complete(null));
        } catch (RuntimeException e) {
            unlock();
            result.completeExceptionally(e);
            return;
        }
        Held<FencedHold> held = Held.of(this, this::close);
        boolean delivered = CompletableFuture.supplyAsync(() -> result.complete(held), ForkJoinPool.commonPool())
                .join();
        Thread.interrupted(); // a cancellation that came too late is answered below, not by an interrupt
        if (!delivered) {
            unlock(); // cancelled while it was acquired: release at once
            return;
        }
        CompletableFuture.anyOf(closeRequested, done).join();
        if (done.isDone()) {
            loss.complete(lock.err());
        }
        closeRequested.join();
        unlock();
    }

    /** On the thread: unlocks and reports how it went. */
    private void unlock() {
        Thread.interrupted();
        try {
            loss.complete(lock.err());
        } catch (RuntimeException e) {
            loss.complete(Optional.empty());
        }
        try {
            lock.unlock();
            released.complete(null);
        } catch (RuntimeException | Error e) {
            released.completeExceptionally(e);
        }
        CompletableFuture.runAsync(() -> ended.complete(null), ForkJoinPool.commonPool());
    }

    /** The held's close: any thread but this acquisition's (which runs no user code). */
    private void close() {
        closeRequested.complete(null);
        try {
            released.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    @Override
    public FencingToken token() {
        Optional<? extends DiscoException> lost = err();
        if (lost.isPresent()) {
            throw lost.get();
        }
        return token;
    }

    @Override
    public CompletionStage<Void> done() {
        return ended.minimalCompletionStage();
    }

    @Override
    public Optional<? extends DiscoException> err() {
        return (done != null && done.isDone()) || released.isDone() ? loss.join() : Optional.empty();
    }

    @Override
    public String toString() {
        return "FencedHold[" + lock + ", token " + token + "]";
    }
}

package io.disco.client;

import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * A read/write lock name in use: a fair local read/write lock in front of the name's service on the
 * current owner. The local readers share one read claim (a {@link Share}): the first makes it, the last
 * releases it; the local writer makes its own write claim. The local lock keeps the two apart, so the
 * service never holds both modes. Both claims are made with {@link SelfHealingClaim}; what is the read/write
 * lock's own is the share and its fairness: once a writer (of any process) queues behind the share
 * ({@link RWLockService#writerWaiting()}), no new reader of this process joins it.
 */
final class RWEntry extends ServiceEntry<RWLockService> {

    /** One read claim in the backend, shared by this process's reading threads. */
    private static final class Share {
        final RWLockService service;
        final RWGrant grant;
        /** Threads holding it; guarded by {@link RWEntry#shares}. */
        int holders;
        /** Completes once its last holder has released it (whatever the release said). */
        final CompletableFuture<Void> ended = new CompletableFuture<>();

        Share(RWLockService service, RWGrant grant) {
            this.service = service;
            this.grant = grant;
        }
    }

    final ReentrantReadWriteLock local = new ReentrantReadWriteLock(true);
    /** Serialises making and ending the read claim; held while the first reader waits for it. */
    private final ReentrantLock shares = new ReentrantLock();

    private Share current;
    /** Each reading thread's hold: the share it holds and the end of its hold. */
    private final ConcurrentHashMap<Thread, ReadHold> readers = new ConcurrentHashMap<>();
    /** The write claim; written and read by the local writer only (published by {@code local}). */
    private RWLockService writeService;

    private RWGrant writeGrant;
    /** The end of the local writer's hold; completed by the writer's release or by its service's end. */
    private volatile CompletableFuture<Void> writeEnded;
    /** The observers' view of the local writer's hold (see {@link HoldWatch}); written and read by the writer. */
    private HoldWatch writeWatch = HoldWatch.OFF;
    /** The service whose end ends the holds made through it: watched once per service, not once per hold. */
    private final AtomicReference<RWLockService> watched = new AtomicReference<>();
    /** How the first local reader claims the share, and the local writer its write claim. */
    private final SelfHealingClaim.Target<RWLockService, RWGrant> readClaims;

    private final SelfHealingClaim.Target<RWLockService, RWGrant> writeClaims;

    /** One reading thread's hold of a share, its end, and the observers' view of it. */
    private record ReadHold(Share share, CompletableFuture<Void> ended, HoldWatch watch) {}

    RWEntry(String name, Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner, Retirements retirements) {
        super(name, Primitive.RWLOCK, currentOwner, retirements);
        this.readClaims = SelfHealingClaim.throughServices(
                this::service,
                RWLockLostException.class,
                (s, wait, deadline) -> wait.claim(deadline, s::tryRLock, s::rLock, s::rLock, s::rLockAsync));
        this.writeClaims = SelfHealingClaim.throughServices(
                this::service,
                RWLockLostException.class,
                (s, wait, deadline) -> wait.claim(deadline, s::tryLock, s::lock, s::lock, s::lockAsync));
    }

    @Override
    RWLockService newService(DiscoBackend.Owner owner) {
        return owner.newRWLock(name);
    }

    @Override
    List<Holding> held(RWLockService service, Instant since) {
        return service
                .held()
                .map(g -> hold(
                        label() + " (" + g.mode().toString().toLowerCase(java.util.Locale.ROOT) + ")",
                        g.key(),
                        g.token(),
                        since))
                .stream()
                .toList();
    }

    // ------------------------------------------------------------------ read

    /**
     * Acquires the read lock for this thread; a first hold (not reentrant) is told to {@code watch} with the share's
     * grant, and its hold ends with the thread's release or the share's service.
     *
     * @return whether it holds now
     */
    boolean acquireRead(Wait wait, long deadline, AttemptWatch watch) throws InterruptedException {
        if (local.isWriteLockedByCurrentThread()) {
            throw new IllegalStateException(
                    "this thread holds the write lock of '" + name + "': no downgrade to the"
                            + " read lock (the backend cannot turn the write claim into a read claim without a gap); unlock first");
        }
        if (!wait.lock(local.readLock(), deadline)) {
            return false;
        }
        if (local.getReadHoldCount() > 1) {
            return true;
        }
        boolean ok = false;
        try {
            while (true) {
                if (!wait.lock(shares, deadline)) {
                    return false;
                }
                CompletableFuture<Void> drained;
                try {
                    Share s = current;
                    if (s != null && s.service.err().isEmpty() && s.service.writerWaiting()) {
                        // A writer (of any process) queued behind this read claim: no new reader joins it, so the
                        // writer waits only for the holds in progress; this reader claims anew once they end.
                        drained = s.ended;
                    } else {
                        if (s == null || s.service.err().isPresent()) {
                            SelfHealingClaim.Granted<RWLockService, RWGrant> g =
                                    SelfHealingClaim.claim(readClaims, wait, deadline);
                            if (g == null) {
                                return false;
                            }
                            s = new Share(g.unit(), g.grant());
                            current = s;
                        }
                        s.holders++;
                        ReadHold hold = new ReadHold(s, new CompletableFuture<>(), watch.granted(s.grant));
                        hold.watch().endsWith(hold.ended(), s.service);
                        readers.put(Thread.currentThread(), hold);
                        watch(s.service);
                        ok = true;
                        return true;
                    }
                } finally {
                    shares.unlock();
                }
                if (wait == Wait.NOT_AT_ALL) {
                    return false;
                }
                wait.await(drained, deadline);
            }
        } catch (TimeoutException e) {
            return false;
        } finally {
            if (!ok) {
                local.readLock().unlock();
            }
        }
    }

    void releaseRead() {
        if (local.getReadHoldCount() == 0) {
            throw new IllegalMonitorStateException("this thread does not hold the read lock of '" + name + "'");
        }
        if (local.getReadHoldCount() > 1) {
            local.readLock().unlock();
            return;
        }
        RuntimeException failure = null;
        ReadHold hold;
        shares.lock();
        try {
            hold = readers.remove(Thread.currentThread());
            Share s = hold.share();
            if (--s.holders == 0) {
                if (current == s) {
                    current = null;
                }
                try {
                    s.service.rUnlock();
                } catch (RuntimeException e) {
                    failure = e;
                } finally {
                    s.ended.complete(null);
                }
            } else if (s.service.err().isPresent()) {
                failure = lost(s.service.err().get());
            }
        } finally {
            shares.unlock();
            local.readLock().unlock();
        }
        // the hold ends with this release, whatever it says: told to the observers here, off the share's lock, and
        // to done()'s dependents off this thread
        if (failure != null) {
            hold.watch().lost(failure);
        } else {
            hold.watch().released();
        }
        hold.ended().completeAsync(() -> null);
        if (failure != null) {
            throw failure;
        }
    }

    private ReadHold readHold() {
        if (local.getReadHoldCount() == 0) {
            throw new IllegalMonitorStateException("this thread does not hold the read lock of '" + name + "'");
        }
        return readers.get(Thread.currentThread());
    }

    private Share readShare() {
        return readHold().share();
    }

    /**
     * The end of {@code service} (lost or closed) ends every hold made through it. Registered once per
     * service, not once per hold: a long-lived service would otherwise gather one callback per hold.
     */
    private void watch(RWLockService service) {
        RWLockService before = watched.get();
        if (before == service || !watched.compareAndSet(before, service)) {
            return;
        }
        service.done().thenRun(() -> {
            readers.values().forEach(h -> {
                if (h.share().service == service) {
                    h.ended().complete(null);
                }
            });
            CompletableFuture<Void> w = writeEnded;
            RWLockService ws = writeService;
            if (w != null && (ws == null || ws == service)) {
                w.complete(null);
            }
        });
    }

    FencingToken readToken() {
        Share s = readShare();
        s.service.err().ifPresent(e -> {
            throw lost(e);
        });
        return s.grant.token();
    }

    CompletionStage<Void> readDone() {
        return readHold().ended().minimalCompletionStage();
    }

    Optional<RWLockLostException> readErr() {
        return readShare().service.err();
    }

    // ------------------------------------------------------------------ write

    /**
     * Acquires the write lock for this thread; a first hold (not reentrant) is told to {@code watch}, and its hold
     * ends with the thread's release or the write claim's service.
     *
     * @return whether it holds now
     */
    boolean acquireWrite(Wait wait, long deadline, AttemptWatch watch) throws InterruptedException {
        if (local.getReadHoldCount() > 0 && !local.isWriteLockedByCurrentThread()) {
            throw new IllegalStateException("this thread holds the read lock of '" + name + "': no upgrade to the write"
                    + " lock (two readers upgrading would wait for each other for ever); unlock first");
        }
        if (!wait.lock(local.writeLock(), deadline)) {
            return false;
        }
        if (local.getWriteHoldCount() > 1) {
            return true;
        }
        boolean ok = false;
        try {
            SelfHealingClaim.Granted<RWLockService, RWGrant> g = SelfHealingClaim.claim(writeClaims, wait, deadline);
            if (g != null) {
                RWLockService service = g.unit();
                writeService = service;
                writeGrant = g.grant();
                writeEnded = new CompletableFuture<>();
                writeWatch = watch.granted(g.grant());
                writeWatch.endsWith(writeEnded, service);
                if (service.err().isPresent()
                        || service.done().toCompletableFuture().isDone()) {
                    writeEnded.complete(null); // finished as it granted
                }
                watch(service);
                ok = true;
            }
            return ok;
        } catch (TimeoutException e) {
            return false;
        } finally {
            if (!ok) {
                local.writeLock().unlock();
            }
        }
    }

    void releaseWrite() {
        requireWriter();
        if (local.getWriteHoldCount() > 1) {
            local.writeLock().unlock();
            return;
        }
        boolean refused = false;
        try {
            writeService.unlock();
            writeWatch.released();
        } catch (RuntimeException e) {
            // the backend refused the delete (a permission taken away): still held by this thread, which may retry
            RWGrant mine = writeGrant;
            refused = writeService
                    .held()
                    .filter(g -> g.token().equals(mine.token()))
                    .isPresent();
            if (!refused) {
                writeWatch.lost(e); // lost before the release, or the release did not complete: given up
            }
            throw e;
        } finally {
            if (!refused) {
                writeWatch = HoldWatch.OFF;
                writeEnded.completeAsync(() -> null);
                writeService = null;
                writeGrant = null;
                local.writeLock().unlock();
            }
        }
    }

    private void requireWriter() {
        if (!local.isWriteLockedByCurrentThread()) {
            throw new IllegalMonitorStateException("this thread does not hold the write lock of '" + name + "'");
        }
    }

    FencingToken writeToken() {
        requireWriter();
        writeService.err().ifPresent(e -> {
            throw lost(e);
        });
        return writeGrant.token();
    }

    CompletionStage<Void> writeDone() {
        requireWriter();
        return writeEnded.minimalCompletionStage();
    }

    Optional<RWLockLostException> writeErr() {
        requireWriter();
        return writeService.err();
    }

    // ------------------------------------------------------------------ shared

    private RWLockLostException lost(RWLockLostException e) {
        return new RWLockLostException(
                "the hold of read/write lock '" + name + "' by this thread was lost: " + e.getMessage(), e);
    }
}

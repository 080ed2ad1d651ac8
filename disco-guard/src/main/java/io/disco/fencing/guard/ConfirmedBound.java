package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The highest revision confirmed with an {@link IssuedBound}, and the reads that raise it: at most
 * one read in flight, shared by every request that needs it, each bounded by a timeout, and spaced
 * by the read interval after a read that was wasted. A {@link Guard} built with
 * {@link Guard.Builder#issuedBound} keeps one (a keyed guard one for all its keys). Used directly, it
 * gives a resource that fences elsewhere (a conditional update in a database) the same bound:
 * {@link #confirm} a token, and pass the answer to the write, for example
 * {@code UPDATE ... WHERE fence_token <= :token AND :token <= :bound}. Thread-safe.
 *
 * <p><b>What decides.</b> A read can only <em>confirm</em> a token for a request that arrived before
 * the read was started: a read started earlier may have been served before the token was issued. So
 * a request whose token is above the confirmed bound registers with a read that has not started
 * yet (the pending one, or a new one; a read takes no registration once started), and that read
 * decides: its answer confirms the token or refuses it as not issued. A pending read starts once the
 * read before it is done: a request that arrives while a read is in flight registers with the next
 * and meanwhile waits for the one in flight, whose answer may confirm its token, never refuse it.
 *
 * <p><b>What it costs.</b> A token at or below the confirmed bound costs one volatile read. Reads
 * start only for a registered request: an idle bound reads nothing. Every request registered with a
 * read shares it (coalesced). A read is <em>wasted</em> when it failed (or timed out) or refused a
 * token registered with it; after a wasted read, the next starts no sooner than the read interval
 * after the wasted one started. So tokens nobody issued, and requests while the service cannot
 * answer, cost at most one read per interval whatever their rate, while a read that only confirmed
 * issued tokens lets the next start at once: real new owners in quick succession are not held
 * back. A read that confirms anything new answers a higher revision than the read before it, so
 * unwasted reads are also bounded: by the number of new owners, and by the service's own writes.
 *
 * <p><b>How long a request waits.</b> At most for the read in flight when it arrived, the read
 * interval, and the read it registered with; each read bounded by the timeout. While nothing is
 * refused or failing, the interval does not apply. A read that fails refuses only the requests
 * registered with it (with {@link BoundUnavailableException}); the next request starts a new one.
 */
public final class ConfirmedBound {

    /** {@link Read#registered} once the read has started: it takes no more requests. */
    private static final long STARTED = -1;

    private final IssuedBound source;
    private final Duration timeout;
    private final Duration interval;
    private final long intervalNanos;
    /** The highest revision read so far; 0 before the first read. Only rises. */
    private final AtomicLong confirmed = new AtomicLong();
    /**
     * The read created last: pending (not started), in flight, or done. The next is created once it has
     * started, and starts once it is done: one read in flight at most.
     */
    private final AtomicReference<Read> latest = new AtomicReference<>(Read.none());

    ConfirmedBound(IssuedBound source, Duration timeout, Duration interval) {
        this.source = source;
        this.timeout = timeout;
        this.interval = interval;
        this.intervalNanos = interval.toNanos();
    }

    /**
     * A bound that confirms tokens with {@code source}, each read bounded by {@code timeout}, reads
     * spaced by the default read interval ({@value Guard#DEFAULT_BOUND_READ_INTERVAL_MILLIS} ms) after
     * a wasted one.
     *
     * @param source the coordination service's current revision
     * @param timeout how long one read may take; positive
     * @return a bound that has confirmed nothing yet
     * @throws NullPointerException if {@code source} or {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public static ConfirmedBound of(IssuedBound source, Duration timeout) {
        return of(source, timeout, Duration.ofMillis(Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS));
    }

    /**
     * A bound that confirms tokens with {@code source}, each read bounded by {@code timeout}; after a
     * read that failed or refused a token, the next starts no sooner than {@code interval} after it
     * started (see the class description).
     *
     * @param source the coordination service's current revision
     * @param timeout how long one read may take; positive
     * @param interval the least time between the start of a wasted read and the start of the next;
     *     zero or positive (zero: no spacing, every refusal may cost a read)
     * @return a bound that has confirmed nothing yet
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code timeout} is zero or negative, or {@code interval} negative
     */
    public static ConfirmedBound of(IssuedBound source, Duration timeout, Duration interval) {
        Objects.requireNonNull(source, "source");
        return new ConfirmedBound(source, checkTimeout(timeout, "timeout"), checkInterval(interval, "interval"));
    }

    static Duration checkTimeout(Duration timeout, String what) {
        Objects.requireNonNull(timeout, what);
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException(what + " must be positive, got " + timeout);
        }
        return timeout;
    }

    static Duration checkInterval(Duration interval, String what) {
        Objects.requireNonNull(interval, what);
        if (interval.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + interval);
        }
        return interval;
    }

    /** @return the highest revision confirmed so far, 0 if none */
    long confirmed() {
        return confirmed.get();
    }

    /** @return the reads started so far */
    long reads() {
        Read r = latest.get();
        return r.registered.get() == STARTED ? r.seq : r.seq - 1;
    }

    /**
     * Confirms that the coordination service issued {@code token}: free when it is at most the
     * highest revision confirmed so far, else it waits for the read that decides it (see the class
     * description: at most the read in flight, the read interval and one more read, each read bounded
     * by the timeout).
     *
     * @param token the token a request carries
     * @return the confirmed revision, at least {@code token}
     * @throws TokenNotIssuedException if a read begun after this call answered a revision below {@code token}
     * @throws BoundUnavailableException if no such read answered in time, or the thread was interrupted
     *     (its interrupt flag is then set)
     */
    public FencingToken confirm(FencingToken token) {
        long t = token.value();
        long c = confirmed.get();
        if (t <= c) {
            return FencingToken.of(c);
        }
        Read r = register(t);
        if (r == null) {
            return FencingToken.of(confirmed.get());
        }
        Throwable failure = run(r, t, token);
        c = confirmed.get();
        if (t <= c) {
            return FencingToken.of(c);
        }
        if (failure != null) {
            throw unavailable(token, failure);
        }
        throw new TokenNotIssuedException(token, FencingToken.of(c));
    }

    /**
     * A read started after this call, waited for: the revision it answered, at least every token
     * issued before the call.
     *
     * @param forToken named in the exception
     * @throws BoundUnavailableException if it did not answer in time
     */
    long fresh(FencingToken forToken) {
        Read r = register(0);
        Throwable failure = run(r, 0, forToken);
        if (failure != null) {
            throw unavailable(forToken, failure);
        }
        return confirmed.get(); // at least what r answered
    }

    /**
     * Registers {@code t} with a read that has not started yet: the newest read if it is pending, else
     * a new one, created with {@code t} registered. Either starts after this call. {@code t == 0} (a
     * fresh read, no token) registers nothing that could make the read wasted.
     *
     * @return the read that decides, or null when {@code t} was confirmed meanwhile
     */
    private Read register(long t) {
        while (true) {
            Read r = latest.get();
            if (r.register(t)) {
                return r;
            }
            if (t != 0 && t <= confirmed.get()) {
                return null;
            }
            Read next = new Read(r.seq + 1, r, t); // registered before anyone can start it
            if (latest.compareAndSet(r, next)) {
                return next;
            }
        }
    }

    /**
     * Waits for the read before {@code r} to end (its answer may confirm {@code t}, never refuse it),
     * then for the read interval if that one was wasted, then starts {@code r} unless another request
     * registered with it did, and waits for it.
     *
     * @return {@code r}'s failure, or null when it answered or {@code t} was confirmed meanwhile
     */
    private Throwable run(Read r, long t, FencingToken token) {
        while (r.registered.get() != STARTED) {
            Read prev = r.prev; // null once r has started
            if (prev != null && !prev.result.isDone()) {
                await(prev, token); // its failure is not ours: r decides
                if (t != 0 && t <= confirmed.get()) {
                    return null;
                }
                continue;
            }
            long wait = prev == null ? 0 : waitAfter(prev);
            if (wait <= 0) {
                if (r.close()) {
                    start(r);
                }
                break;
            }
            try {
                r.result.get(wait, TimeUnit.NANOSECONDS); // started by another request meanwhile, and done
                return null;
            } catch (TimeoutException e) {
                // due now: start it, unless another request did
            } catch (ExecutionException e) {
                return e.getCause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BoundUnavailableException(
                        token, "interrupted while confirming it with the coordination service", e);
            }
        }
        return await(r, token);
    }

    /** How long the read after {@code done} must still wait: until the interval after {@code done} started, if it was wasted. */
    private long waitAfter(Read done) {
        if (intervalNanos == 0 || !done.wasted()) {
            return 0;
        }
        return done.startedAt + intervalNanos - System.nanoTime();
    }

    private void start(Read r) {
        r.startedAt = System.nanoTime();
        r.prev = null; // done: no chain of reads behind the newest
        r.result.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
        CompletionStage<FencingToken> stage;
        try {
            stage = source.current();
        } catch (RuntimeException e) {
            r.result.completeExceptionally(e);
            return;
        }
        if (stage == null) {
            r.result.completeExceptionally(new NullPointerException("IssuedBound.current() returned null"));
            return;
        }
        stage.whenComplete((revision, e) -> {
            if (e != null || revision == null) {
                r.result.completeExceptionally(
                        e != null ? e : new NullPointerException("IssuedBound.current() completed with null"));
                return;
            }
            long v = revision.value();
            confirmed.accumulateAndGet(v, Math::max); // a late answer too: the service had reached it
            r.result.complete(v);
        });
    }

    /** Waits for {@code r}, which has started; returns its failure, or null when it answered. */
    private Throwable await(Read r, FencingToken token) {
        try {
            // r completes within the timeout (orTimeout); the extra second only guards against a lost completion
            r.result.get(timeout.toNanos() + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BoundUnavailableException(
                    token, "interrupted while confirming it with the coordination service", e);
        }
    }

    private BoundUnavailableException unavailable(FencingToken token, Throwable failure) {
        String why = failure instanceof TimeoutException
                ? "the coordination service did not confirm it within " + timeout.toMillis() + " ms"
                : "the coordination service could not confirm it: " + failure;
        return new BoundUnavailableException(token, why, failure);
    }

    @Override
    public String toString() {
        return "ConfirmedBound[" + confirmed + ", reads=" + reads() + ", interval=" + interval.toMillis() + " ms]";
    }

    /**
     * One read of the bound: pending until a registered request starts it (once the read before it is done,
     * and the interval has passed if that one was wasted), then in flight, then done.
     */
    private static final class Read {
        final long seq;
        /** The read before it, until it starts; null after. */
        volatile Read prev;
        /**
         * The highest token registered with it while pending (0: none, or only fresh reads); {@link #STARTED}
         * once started, when no request registers any more.
         */
        final AtomicLong registered;
        /** The highest token registered before it started; written before the read is sent. */
        volatile long decides;
        /** {@link System#nanoTime()} when it started. */
        volatile long startedAt;

        final CompletableFuture<Long> result = new CompletableFuture<>();

        Read(long seq, Read prev, long firstToken) {
            this.seq = seq;
            this.prev = prev;
            this.registered = new AtomicLong(firstToken);
        }

        /** The read before the first: done, answered 0, wasted nothing. */
        static Read none() {
            Read r = new Read(0, null, STARTED);
            r.result.complete(0L);
            return r;
        }

        /** Registers {@code t} if the read has not started; false once it has. */
        boolean register(long t) {
            while (true) {
                long v = registered.get();
                if (v == STARTED) {
                    return false;
                }
                if (v >= t || registered.compareAndSet(v, t)) {
                    return true;
                }
            }
        }

        /** Closes registration: true for the one caller who then starts the read. */
        boolean close() {
            long max = registered.getAndSet(STARTED);
            if (max == STARTED) {
                return false;
            }
            decides = max;
            return true;
        }

        /** Done, and failed or answered below a token registered with it. */
        boolean wasted() {
            return result.isCompletedExceptionally() || result.getNow(0L) < decides;
        }
    }
}

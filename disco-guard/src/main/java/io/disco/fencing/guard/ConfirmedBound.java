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
 * one read in flight, shared by every request that needs it, each bounded by a timeout. A
 * {@link Guard} built with {@link Guard.Builder#issuedBound} keeps one (a keyed guard one for all its
 * keys). Used directly, it gives a resource that fences elsewhere (a conditional update in a
 * database) the same bound: {@link #confirm} a token, and pass the answer to the write, for example
 * {@code UPDATE ... WHERE fence_token <= :token AND :token <= :bound}. Thread-safe.
 *
 * <p>A read can only <em>confirm</em> a token for a request that arrived before the read was
 * started: a read started earlier may have been served before the token was issued. So a request
 * that finds a read in flight which started before it arrived waits for that read (it confirms the
 * token if its answer is high enough), and otherwise for the next one. A token is refused as not
 * issued only by a read that started after the request arrived. A request waits at most for two
 * reads, each bounded by the timeout.
 */
public final class ConfirmedBound {

    private final IssuedBound source;
    private final Duration timeout;
    /** The highest revision read so far; 0 before the first read. Only rises. */
    private final AtomicLong confirmed = new AtomicLong();
    /** The read started last; its {@code seq} counts the reads started. */
    private final AtomicReference<Read> latest = new AtomicReference<>(new Read(0));

    ConfirmedBound(IssuedBound source, Duration timeout) {
        this.source = source;
        this.timeout = timeout;
        latest.get().result.complete(0L);
    }

    /**
     * A bound that confirms tokens with {@code source}, each read bounded by {@code timeout}.
     *
     * @param source the coordination service's current revision
     * @param timeout how long one read may take; positive
     * @return a bound that has confirmed nothing yet
     * @throws NullPointerException if {@code source} or {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public static ConfirmedBound of(IssuedBound source, Duration timeout) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        return new ConfirmedBound(source, timeout);
    }

    /** @return the highest revision confirmed so far, 0 if none */
    long confirmed() {
        return confirmed.get();
    }


    /**
     * Confirms that the coordination service issued {@code token}: free when it is at most the
     * highest revision confirmed so far, else it waits for a read (one shared by every caller that
     * needs it; at most two reads, each bounded by the timeout).
     *
     * @param token the token a request carries
     * @return the confirmed revision, at least {@code token}
     * @throws TokenNotIssuedException if a read begun after this call answered a revision below {@code token}
     * @throws BoundUnavailableException if no such read answered in time, or the thread was interrupted
     *     (its interrupt flag is then set)
     */
    public FencingToken confirm(FencingToken token) {
        long t = token.value();
        long now = confirmed.get();
        if (t <= now) {
            return FencingToken.of(now);
        }
        long arrived = latest.get().seq;
        while (true) {
            Read r = after(arrived);
            Throwable failure = await(r, token);
            long c = confirmed.get();
            if (t <= c) {
                return FencingToken.of(c);
            }
            if (r.seq > arrived) {
                if (failure != null) {
                    throw unavailable(token, failure);
                }
                throw new TokenNotIssuedException(token, FencingToken.of(c));
            }
        }
    }

    /**
     * A read started after this call, waited for: the revision it answered, at least every token
     * issued before the call.
     *
     * @param forToken named in the exception
     * @throws BoundUnavailableException if it did not answer in time
     */
    long fresh(FencingToken forToken) {
        long arrived = latest.get().seq;
        while (true) {
            Read r = after(arrived);
            Throwable failure = await(r, forToken);
            if (r.seq > arrived) {
                if (failure != null) {
                    throw unavailable(forToken, failure);
                }
                return confirmed.get(); // at least what r answered
            }
        }
    }

    /** The read in flight, or a new one if the latest has completed and started no later than {@code arrived}. */
    private Read after(long arrived) {
        while (true) {
            Read r = latest.get();
            if (r.seq > arrived || !r.result.isDone()) {
                return r;
            }
            Read next = new Read(r.seq + 1);
            if (latest.compareAndSet(r, next)) {
                start(next);
                return next;
            }
        }
    }

    private void start(Read r) {
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
                r.result.completeExceptionally(e != null ? e
                        : new NullPointerException("IssuedBound.current() completed with null"));
                return;
            }
            long v = revision.value();
            confirmed.accumulateAndGet(v, Math::max); // a late answer too: the service had reached it
            r.result.complete(v);
        });
    }

    /** Waits for {@code r}; returns its failure, or null when it answered. */
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
            throw new BoundUnavailableException(token, "interrupted while confirming it with the coordination service", e);
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
        return "ConfirmedBound[" + confirmed + ", reads=" + latest.get().seq + "]";
    }

    /** One read of the bound. */
    private static final class Read {
        final long seq;
        final CompletableFuture<Long> result = new CompletableFuture<>();

        Read(long seq) {
            this.seq = seq;
        }
    }
}

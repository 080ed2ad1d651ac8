package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The highest revision a guard (or every key's guard of a keyed guard) has confirmed with its
 * {@link IssuedBound}, and the reads that raise it: at most one read in flight, shared by every
 * request that needs it, each bounded by the timeout.
 *
 * <p>A read can only <em>confirm</em> a token for a request that arrived before the read was
 * started: a read started earlier may have been served before the token was issued. So a request
 * that finds a read in flight which started before it arrived waits for that read (it confirms the
 * token if its answer is high enough), and otherwise for the next one. A token is refused as not
 * issued only by a read that started after the request arrived. A request waits at most for two
 * reads, each bounded by the timeout.
 */
final class ConfirmedBound {

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

    /** @return the highest revision confirmed so far, 0 if none */
    long confirmed() {
        return confirmed.get();
    }

    Duration timeout() {
        return timeout;
    }

    /**
     * Returns when {@code token} is at most a confirmed revision; free when it already is.
     *
     * @throws TokenNotIssuedException if a read started after this call says the token is above the revision
     * @throws BoundUnavailableException if no such read answered in time (or the thread was interrupted)
     */
    void confirm(FencingToken token) {
        long t = token.value();
        if (t <= confirmed.get()) {
            return;
        }
        long arrived = latest.get().seq;
        while (true) {
            Read r = after(arrived);
            Throwable failure = await(r, token);
            long c = confirmed.get();
            if (t <= c) {
                return;
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

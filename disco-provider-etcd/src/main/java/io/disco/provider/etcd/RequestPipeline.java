package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a session sends its etcd requests: each with a timeout, sent again on another member while
 * unanswered (copies), with at most {@value #MAX_IN_FLIGHT} of the services' requests in flight and
 * at most {@value #MAX_EXTRA_COPIES} extra copies outstanding (see {@link Request}); and requests that
 * must eventually be answered, retried until they are ({@link #untilAnswered}).
 */
final class RequestPipeline {

    private static final Logger LOG = LoggerFactory.getLogger(RequestPipeline.class);

    /** At most this many copies of one request are sent. */
    private static final int MAX_ATTEMPTS = 6;
    /** Requests of this session at most in flight; more wait, unsent, their timeouts running. */
    static final int MAX_IN_FLIGHT = 256;
    /** Copies beyond the first, of all this session's requests, at most outstanding at once. */
    static final int MAX_EXTRA_COPIES = 16;

    private final SessionExecutors executors;
    private final ScheduledThreadPoolExecutor worker;
    private final Duration requestTimeout;
    private final long failoverNanos;
    /** The loss or closure that finished the session, or null while it is usable. */
    private final Supplier<DiscoException> finished;

    private final String session;

    /** Guards the fields below, which bound what this session has in flight (see {@link Request}). */
    private final Object flight = new Object();

    private final ArrayDeque<Request<?>> unsent = new ArrayDeque<>();
    private int inFlight;
    private int extraCopies;

    /**
     * @param finished the loss or closure that finished the session, or null while it is usable
     * @param session what the session is called in messages
     */
    RequestPipeline(
            SessionExecutors executors,
            Duration requestTimeout,
            long failoverNanos,
            Supplier<DiscoException> finished,
            String session) {
        this.executors = executors;
        this.worker = executors.worker;
        this.requestTimeout = requestTimeout;
        this.failoverNanos = failoverNanos;
        this.finished = finished;
        this.session = session;
    }

    /**
     * Issues an etcd request that is safe to apply more than once (a read, a guarded delete, a create
     * Txn whose late copies the session's janitor deletes), with the session's request timeout; it is
     * sent again while unanswered (see {@link EtcdOptions.Builder#failoverAfter}). The returned future
     * completes on the session thread, exceptionally with a {@link DiscoException} (the jetcd failure
     * as its cause) when the request fails for a reason that sending it again would not change, or
     * gets no answer in time.
     */
    <T> CompletableFuture<T> rpc(String what, Supplier<CompletableFuture<T>> call) {
        return rpc(worker, what, requestTimeout.toNanos(), true, call);
    }

    /** Like {@link #rpc(String, Supplier)}, for a request that must be sent once (a proclamation: a late copy could overwrite a newer value). */
    <T> CompletableFuture<T> rpcOnce(String what, Supplier<CompletableFuture<T>> call) {
        return rpc(worker, what, requestTimeout.toNanos(), false, call);
    }

    /**
     * A request answered on {@code on}: on the worker, a service's request, bounded; on the lease
     * timer, a renewal, which is never counted against the bounds and never waits.
     */
    <T> CompletableFuture<T> rpc(
            ScheduledThreadPoolExecutor on,
            String what,
            long timeoutNanos,
            boolean resend,
            Supplier<CompletableFuture<T>> call) {
        return new Request<>(on, what, timeoutNanos, resend && failoverNanos < timeoutNanos, call).start();
    }

    /**
     * One request and its copies: the first copy is sent at once, the next after the failover delay
     * without an answer, each later one after twice the previous delay (so at 0, f, 2f, 4f, 8f, 16f),
     * and one at once after a transient failure when no copy is outstanding. The first answer wins.
     *
     * <p>A session has at most {@value #MAX_IN_FLIGHT} service requests in flight, the others waiting
     * in order with their timeouts running, and at most {@value #MAX_EXTRA_COPIES} copies beyond the
     * first outstanding (a copy over that budget is skipped; the next one is tried on schedule); its
     * lease renewals are not counted and never wait. Ten thousand acquisitions started at once would
     * otherwise send ten thousand Txns, each unanswered within the failover delay because of the
     * others, and then up to five copies each: the client stalled under its own traffic, and the
     * lease, renewed through the same client, ran out.
     */
    private final class Request<T> {
        private final ScheduledThreadPoolExecutor on;
        private final String what;
        private final long timeoutNanos;
        private final boolean resend;
        private final Supplier<CompletableFuture<T>> call;
        private final CompletableFuture<T> out = new CompletableFuture<>();
        /** Guards the fields below; private, like every lock of the provider (not the session's lock). */
        private final Object state = new Object();

        private int sent;
        private int outstanding;
        /** Copies beyond the first sent and not answered, counted in {@code extraCopies} until the request ends. */
        private int extraOutstanding;
        /** Whether it holds one of the session's places in flight; under {@code flight}. */
        private boolean flying;

        private ScheduledFuture<?> deadline;
        private ScheduledFuture<?> nextCopy;
        private Throwable lastFailure;

        Request(
                ScheduledThreadPoolExecutor on,
                String what,
                long timeoutNanos,
                boolean resend,
                Supplier<CompletableFuture<T>> call) {
            this.on = on;
            this.what = what;
            this.timeoutNanos = timeoutNanos;
            this.resend = resend;
            this.call = call;
        }

        CompletableFuture<T> start() {
            ScheduledFuture<?> timer = SessionExecutors.schedule(on, inContext(this::timedOut), timeoutNanos);
            if (timer == null) {
                out.completeExceptionally(new DiscoException("session " + session + " is closed"));
                return out;
            }
            synchronized (state) {
                deadline = timer;
            }
            if (!bounded()) {
                send();
                return out;
            }
            out.whenComplete((v, e) -> ended());
            boolean now;
            synchronized (flight) {
                if (out.isDone()) {
                    return out; // timed out already
                }
                now = inFlight < MAX_IN_FLIGHT;
                if (now) {
                    inFlight++;
                    flying = true;
                } else {
                    unsent.add(this);
                }
            }
            if (now) {
                send();
            }
            return out;
        }

        /**
         * {@code task} as it must run: a service's request in the session's context (its future's
         * followers are the services' state machines), a renewal on the lease timer itself.
         */
        private Runnable inContext(Runnable task) {
            return bounded() ? executors.inContext(task) : task;
        }

        /** Whether the session's bounds apply: to the services' requests, never to the lease's renewals. */
        private boolean bounded() {
            return on == worker;
        }

        /** Frees its place in flight (or in line) and its copies' budget, and sends the next waiting request. */
        private void ended() {
            int extra;
            synchronized (state) {
                extra = extraOutstanding;
                extraOutstanding = 0;
            }
            Request<?> next = null;
            synchronized (flight) {
                extraCopies -= extra;
                if (flying) {
                    flying = false;
                    next = unsent.poll();
                    if (next == null) {
                        inFlight--;
                    } else {
                        next.flying = true; // this request's place passes to the next
                    }
                } else {
                    unsent.remove(this);
                }
            }
            if (next != null) {
                Request<?> n = next;
                if (!executors.context.submit(n::send)) { // only the services' requests wait: n is one
                    n.send(); // shut down: it fails or closes at once
                }
            }
        }

        private void send() {
            boolean extra;
            synchronized (state) {
                if (out.isDone() || sent == MAX_ATTEMPTS) {
                    return;
                }
                extra = sent > 0 && bounded();
                boolean skip = false;
                if (extra) {
                    synchronized (flight) {
                        skip = extraCopies >= MAX_EXTRA_COPIES; // over budget: skip this copy, try the next on schedule
                        if (!skip) {
                            extraCopies++;
                            extraOutstanding++;
                        }
                    }
                }
                sent++;
                SessionExecutors.cancel(nextCopy);
                if (resend && sent < MAX_ATTEMPTS) {
                    nextCopy = SessionExecutors.schedule(
                            on, inContext(this::send), sent <= 2 ? failoverNanos : failoverNanos << (sent - 2));
                }
                if (skip) {
                    return;
                }
                outstanding++;
            }
            CompletableFuture<T> src;
            try {
                src = call.get();
            } catch (RuntimeException e) {
                answered(null, e, extra);
                return;
            }
            Thread sender = Thread.currentThread();
            src.whenComplete((v, e) -> {
                if (bounded()) {
                    // On jetcd's thread, which holds no lock of ours, at once; answered already, on the sender's, which
                    // may.
                    boolean taken = Thread.currentThread() == sender
                            ? executors.context.submit(() -> answered(v, e, extra))
                            : executors.context.runHere(() -> answered(v, e, extra));
                    if (!taken) {
                        LOG.debug("session {} is shut down; dropped the answer to {}", session, what);
                    }
                    return;
                }
                try {
                    on.execute(() -> answered(v, e, extra));
                } catch (RejectedExecutionException shutDown) {
                    LOG.debug("session {} is shut down; dropped the answer to {}", session, what);
                }
            });
        }

        private void answered(T value, Throwable error, boolean extra) {
            Throwable failed = null;
            boolean again = false;
            synchronized (state) {
                outstanding--;
                if (extra && extraOutstanding > 0) {
                    extraOutstanding--;
                    synchronized (flight) {
                        extraCopies--;
                    }
                }
                if (out.isDone()) {
                    return;
                }
                if (error != null) {
                    Throwable cause = EtcdErrors.unwrap(error);
                    lastFailure = cause;
                    if (!resend || !EtcdErrors.isTransient(cause)) {
                        failed = cause;
                    } else if (outstanding == 0) {
                        again = sent < MAX_ATTEMPTS;
                        failed = again ? null : cause;
                    }
                }
                if (error == null || failed != null) {
                    SessionExecutors.cancel(deadline);
                    SessionExecutors.cancel(nextCopy);
                }
            }
            if (error == null) {
                out.complete(value);
            } else if (failed != null) {
                out.completeExceptionally(EtcdErrors.failure(what, failed));
            } else if (again) {
                LOG.debug("{} failed, sending it again: {}", what, String.valueOf(lastFailure));
                send();
            }
        }

        private void timedOut() {
            Throwable last;
            synchronized (state) {
                SessionExecutors.cancel(nextCopy);
                last = lastFailure;
            }
            out.completeExceptionally(new DiscoException(
                    "etcd could not be reached: no answer to " + what + " within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"
                            + (last == null ? "" : " (last failure: " + last.getMessage() + ")"),
                    new TimeoutException()));
        }
    }

    /**
     * Issues a request that must eventually be answered (a guarded delete, a read), again and again
     * with a backoff from 100 ms to 2 s, until etcd answers. Completes with the answer, or with null
     * once the session is finished or shut down.
     */
    <T> CompletableFuture<T> untilAnswered(String what, Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> answered = new CompletableFuture<>();
        attempt(what, call, answered, 100);
        return answered;
    }

    private <T> void attempt(
            String what, Supplier<CompletableFuture<T>> call, CompletableFuture<T> answered, long backoffMs) {
        if (finished.get() != null) {
            answered.complete(null);
            return;
        }
        rpc(what, call).whenComplete((r, e) -> {
            if (e == null) {
                answered.complete(r);
                return;
            }
            if (!EtcdErrors.isTransient(e)) {
                LOG.warn(
                        "{} failed and is retried every {} ms until the session ends: {}",
                        what,
                        backoffMs,
                        e.getMessage());
            }
            if (executors.schedule(
                            () -> attempt(what, call, answered, Math.min(2000, backoffMs * 2)),
                            backoffMs,
                            TimeUnit.MILLISECONDS)
                    == null) {
                answered.complete(null); // shut down
            }
        });
    }
}

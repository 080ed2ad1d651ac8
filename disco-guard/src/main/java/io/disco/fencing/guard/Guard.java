package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server-side fencing check: a high-water mark of the greatest token a resource has accepted,
 * which turns away requests from stale owners.
 *
 * <p><b>Accept</b> means: a token {@code t} is accepted when {@code t >= mark}, and the mark then
 * becomes {@code t}; a token lower than the mark is rejected and leaves the mark as it was. The
 * comparison is {@code >=}, not {@code >}, so that an owner can send any number of requests under
 * its one token, and all readers admitted in one read phase of a read/write lock, which share one
 * token, pass alike. Each check is atomic (linearizable): once a check has accepted {@code t}, no
 * check that starts afterwards accepts a token lower than {@code t}.
 *
 * <p>A token equal to the mark (the common case: the same owner writing again) is accepted on a
 * plain read of one {@link AtomicLong}, without a lock and without writing shared memory; only a
 * token that raises the mark (once per new owner) takes the guard's lock, to persist the new mark
 * first when the guard has a {@link GuardStore}. All methods are thread-safe.
 *
 * <h2>Check or admission</h2>
 * {@link #check} only compares: a request checked with token {@code t} may still be running when a
 * newer owner's request with {@code t' > t} is checked and finishes, and then the older request
 * writes after the newer one. {@link #admit} (and {@link #run}, {@link #call}) closes that gap: it
 * orders execution, not only arrival. The guarantee: <b>every action admitted with token {@code t}
 * completes (its {@link Admission} is closed) before any action admitted with a higher token
 * starts.</b>
 * <ul>
 *   <li>As soon as a higher token is seen (admitted, waiting or checked), lower tokens are rejected
 *       at once with {@link TokenStaleException}, as by {@link #check}.</li>
 *   <li>A higher token's admission waits until every admission with a lower token has been closed;
 *       equal tokens (one owner's parallel requests, the readers of one read phase) run together,
 *       and admitting a token equal to the running ones takes no lock.</li>
 *   <li>The wait is bounded by the drain timeout ({@link Builder#drainTimeout}, default
 *       {@value #DEFAULT_DRAIN_TIMEOUT_SECONDS} s): when it passes, the admission fails with
 *       {@link DrainTimeoutException} and nothing of it runs. That is safe: the newer token stays
 *       the mark, so nothing older is admitted any more, and the client retries.</li>
 * </ul>
 * An action that outlives the drain timeout (a slow disk, a stuck downstream call) still runs to
 * its end, and holds newer owners back meanwhile: bound the resource's own actions below the drain
 * timeout, or compare the token where the resource writes (a conditional update in the database).
 *
 * <h2>Tokens nobody issued</h2>
 * A token is a revision of the coordination service, so a legitimate one is never above the
 * service's current revision when the resource sees it. Built with an {@link IssuedBound}
 * ({@link Builder#issuedBound}), the guard keeps the highest revision it has confirmed with the
 * service, and a token above both the mark and that confirmed bound is confirmed first: one read of
 * the service's current revision, shared by every request that waits for it (coalesced), bounded by
 * {@link Builder#boundTimeout}; after a read that refused a token or failed, the next waits for the
 * read interval ({@link Builder#boundReadInterval}, default {@value #DEFAULT_BOUND_READ_INTERVAL_MILLIS}
 * ms), so a flood of tokens nobody issued costs at most one read per interval. A token still above
 * the revision is refused with {@link TokenNotIssuedException} and never moves the mark; when the
 * service cannot answer in time the token is refused with {@link BoundUnavailableException} (retry),
 * never admitted unconfirmed, while tokens at or below the confirmed bound keep being admitted. A
 * token equal to or lower than the mark, or up to the confirmed bound, costs nothing extra: the
 * equal-token paths above read no more than before. So no single request can raise the mark above what the service has issued.
 *
 * <p>What the bound does not do: a token at or below the service's current revision is accepted
 * if it is at least the mark, whoever sends it. A client that steals or guesses a real, current
 * token can write as its owner, and one that sends a token issued but not yet seen here (at most
 * the current revision) can hold the current owner back until the next grant, whose token is higher.
 * That is authentication of the clients, a separate duty of the resource, not fencing.
 *
 * <p><b>Without an issued bound</b> the guard accepts any token at least its mark, including one no
 * coordination service issued: a single request with {@code 9223372036854775807} raises the mark
 * for good, and every legitimate owner is rejected as stale from then on (with a store, across
 * restarts too). Use a guard without one only where every client that can reach the resource is
 * trusted not to send such a token. A mark poisoned that way is lowered with {@link #lowerMark}
 * once the guard has an issued bound.
 *
 * <h2>Restarts and keys</h2>
 * Built with a {@link GuardStore} ({@link Builder#store}), the guard loads its mark at start and
 * persists every higher mark before it accepts it, so a restarted resource keeps rejecting the
 * tokens it rejected before (a failed write to the store refuses the request with
 * {@link UncheckedIOException} and leaves the mark unchanged). A resource with no state of its own
 * can instead start from etcd's current revision ({@link Builder#initialToken}): every token issued
 * before the restart is then rejected, and current owners acquire again. The mark is one per
 * guard; a resource that serves many independently locked things uses a {@link KeyedGuard}, one
 * mark per key, since a token of one lock name says nothing about another.
 *
 * <p>One duty stays with the resource: one guard per guarded resource. Every path that reaches the
 * resource must go through the same instance (shared by the HTTP filter, the gRPC interceptor and
 * any direct caller); two guards for one resource each keep their own mark and let a stale owner
 * through the other.
 */
public final class Guard {

    /** The default drain timeout, in seconds. */
    public static final long DEFAULT_DRAIN_TIMEOUT_SECONDS = 5;

    /** The default bound on one read of the {@link IssuedBound}, in milliseconds. */
    public static final long DEFAULT_BOUND_TIMEOUT_MILLIS = 2000;

    /**
     * The default read interval of the {@link IssuedBound}, in milliseconds: after a read that refused a
     * token or failed, the next starts no sooner than this after it ({@link Builder#boundReadInterval}).
     */
    public static final long DEFAULT_BOUND_READ_INTERVAL_MILLIS = 50;

    /** The key under which a single (not keyed) guard's mark is persisted in its store. */
    static final String SINGLE_KEY = "";

    // The parts: the mark and what moves it (GuardMark: check, confirmation with the issued bound, raise
    // and persist; MarkLowering lowers it), the admission in token order (OrderedAdmission, with its
    // Epoch), and the listener's events (GuardEvents). This class is the API over them.

    private final GuardMark mark;
    private final OrderedAdmission admissions;

    Guard(
            String key,
            long initial,
            Duration drainTimeout,
            GuardStore store,
            GuardListener listener,
            ConfirmedBound bound) {
        this.mark = new GuardMark(key, initial, store, new GuardEvents(key, listener), bound);
        this.admissions = new OrderedAdmission(mark, drainTimeout);
    }

    /**
     * A guard that has accepted nothing yet: it accepts any token first. In memory, with the default
     * drain timeout.
     *
     * @return a new guard
     */
    public static Guard create() {
        return builder().build();
    }

    /**
     * A guard whose mark starts at {@code token}, as if it had already accepted it: it accepts
     * {@code token} and anything greater, and rejects anything lower.
     *
     * @param token the lowest token to accept, for example the highest one accepted before a restart
     * @return a new guard
     */
    public static Guard withInitialToken(FencingToken token) {
        return builder().initialToken(token).build();
    }

    /**
     * The same as {@link #withInitialToken(FencingToken) withInitialToken(FencingToken.of(value))}.
     *
     * @param value the lowest token value to accept, at least 1
     * @return a new guard
     * @throws IllegalArgumentException if {@code value < 1}
     */
    public static Guard withInitialToken(long value) {
        return withInitialToken(FencingToken.of(value));
    }

    /**
     * A builder for a guard or a keyed guard with an initial token, a drain timeout or a store.
     *
     * @return a new builder with the defaults: nothing accepted, {@value #DEFAULT_DRAIN_TIMEOUT_SECONDS}
     *     s drain timeout, in memory
     */
    public static Builder builder() {
        return new Builder();
    }

    /** @return how long a newer token's admission waits for actions with older tokens */
    public Duration drainTimeout() {
        return admissions.drainTimeout();
    }

    /**
     * Accepts {@code token} if it is at least the mark, advancing the mark to it; rejects it,
     * leaving the mark unchanged, if it is lower. Does not wait for admitted actions.
     *
     * @param token the token the request carries
     * @return {@code token}, once accepted
     * @throws TokenStaleException if {@code token} is lower than the mark; it carries both the
     *     token and the mark it lost to
     * @throws UncheckedIOException if the token raises the mark and the store could not persist it
     */
    public FencingToken check(FencingToken token) {
        return mark.check(token);
    }

    /** A request to this guard carried no usable token: tells the listener. */
    void malformed() {
        mark.events.rejected(null, GuardListener.Rejection.MALFORMED);
    }

    /**
     * Admits an action with {@code token}, in token order (see the class description): rejects it
     * if a higher token has been seen, else waits (at most the drain timeout) until every admission
     * with a lower token is closed. The action runs between this call and {@link Admission#close()};
     * close it when the action has completed, including on failure (try-with-resources).
     *
     * @param token the token the request carries
     * @return the open admission
     * @throws TokenStaleException if a higher token has been seen, before or while waiting
     * @throws DrainTimeoutException if older admissions were still open after the drain timeout
     * @throws UncheckedIOException if the token raises the mark and the store could not persist it
     * @throws InterruptedException if the thread was interrupted while waiting (nothing was admitted)
     */
    public Admission admit(FencingToken token) throws InterruptedException {
        return new Admission(token, admissions.enter(token));
    }

    /**
     * Runs {@code action} admitted with {@code token} ({@link #admit}), closing the admission when it
     * completes or throws.
     *
     * @param token the token the request carries
     * @param action what the request does to the resource
     * @throws TokenStaleException if a higher token has been seen
     * @throws DrainTimeoutException if older admissions were still open after the drain timeout
     * @throws InterruptedException if interrupted while waiting for admission
     */
    public void run(FencingToken token, Runnable action) throws InterruptedException {
        try (Admission ignored = admit(token)) {
            action.run();
        }
    }

    /**
     * Like {@link #run}, for an action with a result.
     *
     * @param token the token the request carries
     * @param action what the request does to the resource
     * @param <T> the result type
     * @return the action's result
     * @throws Exception what the action throws, or what {@link #admit} throws
     */
    public <T> T call(FencingToken token, Callable<T> action) throws Exception {
        try (Admission ignored = admit(token)) {
            return action.call();
        }
    }

    /**
     * The highest revision this guard (for a keyed guard: any key's guard) has confirmed with its
     * {@link IssuedBound}: tokens up to it are accepted without asking the coordination service again.
     *
     * @return the confirmed bound; empty without an issued bound or before its first read
     */
    public Optional<FencingToken> confirmedBound() {
        long b = mark.bound == null ? 0 : mark.bound.confirmed();
        return b == 0 ? Optional.empty() : Optional.of(FencingToken.of(b));
    }

    /**
     * Recovery from a poisoned mark (one raised by a token nobody issued, before this guard had an
     * {@link IssuedBound}, or loaded so from its store): lowers the mark to the coordination service's
     * current revision, read afresh, as {@link #lowerMark(FencingToken)} does. Every token issued
     * before that read is rejected from then on (as after seeding a restarted guard with
     * {@link Builder#initialToken}); current owners acquire again and get higher tokens.
     *
     * @return the mark afterwards ({@link #highWater()})
     * @throws IllegalStateException if the guard has no issued bound
     * @throws BoundUnavailableException if the coordination service could not be read; nothing changed
     * @throws UncheckedIOException if the store could not persist the lower mark; nothing changed
     * @throws UnsupportedOperationException if the store cannot lower a mark ({@link GuardStore#lower})
     */
    public Optional<FencingToken> lowerMarkToBound() {
        return MarkLowering.toBound(mark);
    }

    /**
     * Lowers the mark to {@code to}, persisting it in the store first, but never below the
     * coordination service's current revision: that is read afresh from the {@link IssuedBound},
     * and {@code to} must be at least that revision. A lower mark would accept again tokens that
     * were issued to owners who have since been replaced; at the revision, every token issued so far
     * is rejected and the next grant is admitted. A mark already at or below {@code to} is left as it
     * is. Admissions still running with the old, higher token complete before any newer token runs
     * (as for any higher token); the old token, sent again, must be confirmed like any other token
     * above the mark, and is refused with {@link TokenNotIssuedException} when nobody issued it.
     *
     * <p>This is a maintenance operation, for an operator; a guard with an issued bound cannot be
     * poisoned in the first place. Without an issued bound it is refused: the guard could not tell
     * how low is safe.
     *
     * @param to the new mark
     * @return the mark afterwards ({@link #highWater()})
     * @throws NullPointerException if {@code to} is null
     * @throws IllegalArgumentException if {@code to} is below the coordination service's
     *     current revision; nothing changed
     * @throws IllegalStateException if the guard has no issued bound
     * @throws BoundUnavailableException if the coordination service could not be read; nothing changed
     * @throws UncheckedIOException if the store could not persist the lower mark; nothing changed
     * @throws UnsupportedOperationException if the store cannot lower a mark ({@link GuardStore#lower})
     */
    public Optional<FencingToken> lowerMark(FencingToken to) {
        return MarkLowering.to(mark, to);
    }

    /**
     * The greatest token accepted so far (or the initial token), empty while nothing has been.
     * The value may be outdated by the time it is used if other threads are checking tokens.
     *
     * @return the high-water mark
     */
    public Optional<FencingToken> highWater() {
        return mark.highWater();
    }

    @Override
    public String toString() {
        return "Guard[highWater=" + mark.value.get() + "]";
    }

    /** An admitted action in progress; {@link #close()} ends it (idempotent, any thread). */
    public final class Admission implements AutoCloseable {
        private static final VarHandle OPEN;

        static {
            try {
                OPEN = MethodHandles.lookup().findVarHandle(Admission.class, "open", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final FencingToken token;
        private final Epoch epoch;

        @SuppressWarnings("unused") // through OPEN
        private volatile boolean open = true;

        private Admission(FencingToken token, Epoch epoch) {
            this.token = token;
            this.epoch = epoch;
        }

        /** @return the token this action was admitted with */
        public FencingToken token() {
            return token;
        }

        /**
         * Ends the action. When the last open admission of its token ends, a waiting higher token
         * starts. Closing again does nothing.
         */
        @Override
        public void close() {
            if (OPEN.compareAndSet(this, true, false)) {
                epoch.leave();
            }
        }
    }

    /**
     * Builds a {@link Guard}, or a {@link KeyedGuard} whose every key's guard has these settings.
     * Not thread-safe; each build returns a new, independent guard.
     */
    public static final class Builder {
        private long initial;
        private Duration drainTimeout = Duration.ofSeconds(DEFAULT_DRAIN_TIMEOUT_SECONDS);
        private GuardStore store;
        private GuardListener listener;
        private IssuedBound issuedBound;
        private Duration boundTimeout = Duration.ofMillis(DEFAULT_BOUND_TIMEOUT_MILLIS);
        private Duration boundReadInterval = Duration.ofMillis(DEFAULT_BOUND_READ_INTERVAL_MILLIS);

        private Builder() {}

        /**
         * Where the guard confirms that a token above its mark was issued by the coordination service
         * (see {@link IssuedBound} and the class description). Without one, any token at least the mark
         * is accepted, including one nobody issued, which then locks every legitimate owner out.
         *
         * @param issuedBound the coordination service's current revision, for example
         *     {@code EtcdIssuedBound.of(client)}; for a keyed guard, one confirmed bound serves every key
         *     (the service's revisions are global)
         * @return this builder
         */
        public Builder issuedBound(IssuedBound issuedBound) {
            this.issuedBound = Objects.requireNonNull(issuedBound, "issuedBound");
            return this;
        }

        /**
         * How long one read of the {@link #issuedBound issued bound} may take before the token that needed
         * it is refused with {@link BoundUnavailableException}. A request waits at most for two reads (the
         * one in flight when it arrived, and the one that decides it) and, after a wasted read, the
         * {@linkplain #boundReadInterval read interval}.
         *
         * @param timeout positive; default {@value #DEFAULT_BOUND_TIMEOUT_MILLIS} ms
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is zero or negative
         */
        public Builder boundTimeout(Duration timeout) {
            this.boundTimeout = positive(timeout, "timeout", "boundTimeout: timeout");
            return this;
        }

        /**
         * The read interval of the {@link #issuedBound issued bound}: after a read that refused a token
         * (one nobody issued) or failed (the service could not answer in time), the next read starts no
         * sooner than this after that one started. Tokens nobody issued, and new tokens while the service
         * cannot answer, then cost at most one read per interval whatever their rate, coalesced across
         * requests and time; each such request waits at most the interval and one read for its answer,
         * and so does a real new owner's first request that arrives meanwhile. A read that only confirmed
         * issued tokens lets the next start at once, so real new owners are not held back while nothing is
         * refused. Reads start only for a request that needs one: an idle guard reads nothing.
         *
         * @param interval zero or positive; default {@value #DEFAULT_BOUND_READ_INTERVAL_MILLIS} ms; zero
         *     spaces nothing (every refusal may cost a read, as a flood's requests arrive)
         * @return this builder
         * @throws NullPointerException if {@code interval} is null
         * @throws IllegalArgumentException if {@code interval} is negative
         */
        public Builder boundReadInterval(Duration interval) {
            this.boundReadInterval = ConfirmedBound.checkInterval(interval, "boundReadInterval: interval");
            return this;
        }

        /**
         * Who is told of every accept and reject (see {@link GuardListener}); for a keyed guard, of
         * every key's.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(GuardListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * The lowest token to accept: the mark starts at {@code token} (or at the stored mark, if that
         * is higher). Seeding with etcd's current revision at start rejects every token issued before.
         *
         * @param token the initial mark
         * @return this builder
         */
        public Builder initialToken(FencingToken token) {
            this.initial = Objects.requireNonNull(token, "token").value();
            return this;
        }

        /**
         * How long a newer token's admission waits for actions admitted with older tokens.
         *
         * @param drainTimeout positive
         * @return this builder
         * @throws NullPointerException if {@code drainTimeout} is null
         * @throws IllegalArgumentException if {@code drainTimeout} is zero or negative
         */
        public Builder drainTimeout(Duration drainTimeout) {
            this.drainTimeout = positive(drainTimeout, "drainTimeout", "drainTimeout");
            return this;
        }

        /**
         * @return {@code d}, checked: not null (the {@link NullPointerException} names {@code parameter}) and
         *     positive (the {@link IllegalArgumentException} says that {@code what} must be)
         */
        private static Duration positive(Duration d, String parameter, String what) {
            Objects.requireNonNull(d, parameter);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }

        /**
         * Where the mark survives restarts: loaded when the guard is built, written before each
         * higher mark is accepted. Without a store the mark lives in memory only.
         *
         * @param store the store; one guard (or keyed guard) per store
         * @return this builder
         */
        public Builder store(GuardStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * @return a new guard
         * @throws UncheckedIOException if the store could not be read
         */
        public Guard build() {
            return new Guard(SINGLE_KEY, initialFor(load(), SINGLE_KEY), drainTimeout, store, listener, bound());
        }

        /**
         * @return a new keyed guard: one mark per key, each starting from its stored mark or the
         *     initial token
         * @throws UncheckedIOException if the store could not be read
         */
        public KeyedGuard buildKeyed() {
            Map<String, FencingToken> loaded = load();
            GuardListener l = listener;
            ConfirmedBound b = bound();
            return new KeyedGuard(k -> new Guard(k, initialFor(loaded, k), drainTimeout, store, l, b), l);
        }

        private ConfirmedBound bound() {
            return issuedBound == null ? null : new ConfirmedBound(issuedBound, boundTimeout, boundReadInterval);
        }

        private Map<String, FencingToken> load() {
            if (store == null) {
                return Map.of();
            }
            try {
                return Map.copyOf(store.load());
            } catch (IOException e) {
                throw new UncheckedIOException("could not load the fencing marks from " + store, e);
            }
        }

        private long initialFor(Map<String, FencingToken> loaded, String key) {
            FencingToken stored = loaded.get(key);
            return stored == null ? initial : Math.max(initial, stored.value());
        }
    }
}

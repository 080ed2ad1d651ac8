package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.util.Optional;
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
 * <p>The mark lives in memory, in one {@link AtomicLong} advanced by a compare-and-set loop: no
 * locks, and a token equal to the mark (the common case: the same owner writing again) is
 * accepted on a plain read without writing the shared cache line. All methods are thread-safe.
 *
 * <p>Two duties stay with the resource:
 * <ul>
 *   <li>One guard per guarded resource: every path that reaches the resource must go through the
 *       same instance (a singleton per resource, shared by the HTTP filter, the gRPC interceptor and
 *       any direct caller). Two guards for one resource each keep their own mark and let a stale
 *       owner through the other.</li>
 *   <li>Durability: the mark is lost with the process. A resource that must keep rejecting stale
 *       owners across a restart persists the mark (for example next to the data it protects) and
 *       seeds the new guard with {@link #withInitialToken(FencingToken)}.</li>
 * </ul>
 *
 * <p>The guard orders admissions; it does not make the request's own work atomic with the check.
 * A resource whose writes from different owners may overlap in time should also compare the
 * token where it writes (for example a conditional update in the database).
 */
public final class Guard {

    /** The high-water mark; 0 while no token has been accepted (tokens are at least 1). */
    private final AtomicLong mark;

    private Guard(long initial) {
        this.mark = new AtomicLong(initial);
    }

    /**
     * A guard that has accepted nothing yet: it accepts any token first.
     *
     * @return a new guard
     */
    public static Guard create() {
        return new Guard(0);
    }

    /**
     * A guard whose mark starts at {@code token}, as if it had already accepted it: it accepts
     * {@code token} and anything greater, and rejects anything lower. Use it to restore a
     * persisted mark after a restart.
     *
     * @param token the highest token accepted before the restart
     * @return a new guard
     */
    public static Guard withInitialToken(FencingToken token) {
        return new Guard(token.value());
    }

    /**
     * The same as {@link #withInitialToken(FencingToken) withInitialToken(FencingToken.of(value))}.
     *
     * @param value the highest token value accepted before the restart, at least 1
     * @return a new guard
     * @throws IllegalArgumentException if {@code value < 1}
     */
    public static Guard withInitialToken(long value) {
        return withInitialToken(FencingToken.of(value));
    }

    /**
     * Accepts {@code token} if it is at least the mark, advancing the mark to it; rejects it,
     * leaving the mark unchanged, if it is lower.
     *
     * @param token the token the request carries
     * @return {@code token}, once accepted
     * @throws TokenStaleException if {@code token} is lower than the mark; it carries both the
     *     token and the mark it lost to
     */
    public FencingToken check(FencingToken token) {
        long t = token.value();
        long m = mark.get();
        while (t > m) {
            long witness = mark.compareAndExchange(m, t);
            if (witness == m) {
                return token;
            }
            m = witness;
        }
        if (t == m) {
            return token;
        }
        throw new TokenStaleException(token, FencingToken.of(m));
    }

    /**
     * The greatest token accepted so far (or the initial token), empty while nothing has been.
     * The value may be outdated by the time it is used if other threads are checking tokens.
     *
     * @return the high-water mark
     */
    public Optional<FencingToken> highWater() {
        long m = mark.get();
        return m == 0 ? Optional.empty() : Optional.of(FencingToken.of(m));
    }

    @Override
    public String toString() {
        return "Guard[highWater=" + mark.get() + "]";
    }
}

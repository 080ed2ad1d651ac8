package io.disco.benchmarks;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.IssuedBound;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Guard checks and admissions against a plain read of an {@link AtomicLong}. All share one instance
 * between all benchmark threads ({@link Scope#Benchmark}), as a guard is shared by every request
 * thread of a resource. {@code guardCheckEqualToken} and {@code guardAdmitEqualToken} see the token
 * equal to the mark on every call: the common case of one owner writing again.
 * {@code guardAdmitAdvancing} draws its token from a shared counter, a new token every 1,000
 * requests, so that a new owner takes over while the previous one's requests are still in flight
 * (those that arrive late are rejected as stale, and counted as done). Run by {@link Bench}.
 *
 * <p>The {@code ...Bounded} variants do the same with a guard built with an {@link IssuedBound}
 * (answering at once, in process: what is measured is the guard's own cost, not etcd's): the
 * equal-token paths must be as fast as without a bound (they read nothing more), and an advancing
 * token at or below the confirmed bound adds one volatile read to the path that takes the lock.
 */
@State(Scope.Benchmark)
public class GuardBenchmark {

    /** Requests per token in {@link #guardAdmitAdvancing}. */
    static final long REQUESTS_PER_TOKEN = 1000;

    private Guard guard;
    private Guard advancing;
    private Guard bounded;
    private Guard advancingBounded;
    private AtomicLong requestsBounded;
    private FencingToken token;
    private AtomicLong plain;
    private AtomicLong requests;

    @Setup
    public void setup() {
        token = FencingToken.of(42);
        guard = Guard.withInitialToken(token);
        advancing = Guard.create();
        plain = new AtomicLong(42);
        requests = new AtomicLong();
        IssuedBound everything = () -> CompletableFuture.completedFuture(FencingToken.of(Long.MAX_VALUE));
        bounded = Guard.builder().issuedBound(everything).initialToken(token).build();
        advancingBounded = Guard.builder().issuedBound(everything).build();
        advancingBounded.check(FencingToken.of(1)); // the one read: every later token is below the confirmed bound
        requestsBounded = new AtomicLong();
    }

    @Benchmark
    public FencingToken guardCheckEqualToken() {
        return guard.check(token);
    }

    @Benchmark
    public FencingToken guardAdmitEqualToken() throws InterruptedException {
        try (Guard.Admission a = guard.admit(token)) {
            return a.token();
        }
    }

    @Benchmark
    public boolean guardAdmitAdvancing() throws InterruptedException {
        FencingToken t = FencingToken.of(1 + requests.getAndIncrement() / REQUESTS_PER_TOKEN);
        try (Guard.Admission a = advancing.admit(t)) {
            return a != null;
        } catch (TokenStaleException stale) {
            return false;
        }
    }

    @Benchmark
    public FencingToken guardCheckEqualTokenBounded() {
        return bounded.check(token);
    }

    @Benchmark
    public FencingToken guardAdmitEqualTokenBounded() throws InterruptedException {
        try (Guard.Admission a = bounded.admit(token)) {
            return a.token();
        }
    }

    @Benchmark
    public boolean guardAdmitAdvancingBounded() throws InterruptedException {
        FencingToken t = FencingToken.of(1 + requestsBounded.getAndIncrement() / REQUESTS_PER_TOKEN);
        try (Guard.Admission a = advancingBounded.admit(t)) {
            return a != null;
        } catch (TokenStaleException stale) {
            return false;
        }
    }

    @Benchmark
    public long plainAtomicLongGet() {
        return plain.get();
    }
}

package io.disco.benchmarks;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Guard checks against a plain read of an {@link AtomicLong}. Both share one instance between all
 * benchmark threads ({@link Scope#Benchmark}), as a guard is shared by every request thread of a
 * resource. The guard sees the token equal to its mark on every call: the common case of one owner
 * writing again, accepted on a plain read. Run by {@link Bench} with 1 and 2 threads.
 */
@State(Scope.Benchmark)
public class GuardBenchmark {

    private Guard guard;
    private FencingToken token;
    private AtomicLong plain;

    @Setup
    public void setup() {
        token = FencingToken.of(42);
        guard = Guard.withInitialToken(token);
        plain = new AtomicLong(42);
    }

    @Benchmark
    public FencingToken guardCheckEqualToken() {
        return guard.check(token);
    }

    @Benchmark
    public long plainAtomicLongGet() {
        return plain.get();
    }
}

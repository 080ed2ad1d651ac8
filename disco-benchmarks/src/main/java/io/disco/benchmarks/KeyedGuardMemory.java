package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.KeyedGuard;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/**
 * Case "keyed-guard" (section 5): the heap a {@link KeyedGuard} holds per idle key, with one accepted
 * token each. Needs no etcd: runs after it is stopped.
 */
final class KeyedGuardMemory implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        int keys = bench.quick ? 20_000 : 100_000;
        log("5. KeyedGuard: heap per idle key, %d keys with one accepted token each", keys);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        KeyedGuard guards = KeyedGuard.create();
        long before = usedAfterGc(memory);
        for (int i = 0; i < keys; i++) {
            guards.forKey("tenant-" + i).check(FencingToken.of(i + 1L));
        }
        long after = usedAfterGc(memory);
        long keyStrings = 0;
        for (int i = 0; i < keys; i++) {
            keyStrings += 24 + 16 + ("tenant-" + i).length(); // String + byte[] header + Latin-1 bytes
        }
        double perKey = (after - before) / (double) keys;
        bench.report.row(
                "5 guard",
                "KeyedGuard, heap per idle key (incl. its key string, ~" + Math.round(keyStrings / (double) keys)
                        + " B)",
                perKey,
                Double.NaN,
                "B",
                "keys",
                guards.size());
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}

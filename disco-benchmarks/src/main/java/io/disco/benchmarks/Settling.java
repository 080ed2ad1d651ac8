package io.disco.benchmarks;

import io.disco.testservers.RpcCounter;

/**
 * After the scale case's last grant, the requests that go on (watches moved, re-reads) until etcd requests stop:
 * a half second in which the client started fewer than a given number of calls.
 *
 * @param waitedMs how long it waited
 * @param quiet whether the requests stopped (else it gave up)
 */
record Settling(long waitedMs, boolean quiet) {

    /** Waits until a half second passes in which {@code counter} counts fewer than {@code calls}; at most {@code boundMs}. */
    static Settling await(RpcCounter counter, long calls, long boundMs) throws InterruptedException {
        long t0 = System.nanoTime();
        while (true) {
            RpcCounter.Snapshot before = counter.snapshot();
            Thread.sleep(500);
            RpcCounter.Snapshot d = counter.snapshot().minus(before);
            long started =
                    d.calls().values().stream().mapToLong(Long::longValue).sum();
            long waited = (System.nanoTime() - t0) / 1_000_000;
            if (started < calls) {
                return new Settling(waited, true);
            }
            if (waited >= boundMs) {
                return new Settling(waited, false);
            }
        }
    }
}

package io.disco.benchmarks;

import io.disco.testservers.RpcCounter;

/**
 * The etcd requests the cases count for a lock operation: its unary KV calls (Txn, Range, Put, DeleteRange)
 * plus the watches it creates, as a {@link RpcCounter} on the run's client sees them.
 */
final class EtcdRequests {

    private EtcdRequests() {}

    /** @return the KV calls and watch creates in {@code rpcs} */
    static long of(RpcCounter.Snapshot rpcs) {
        return rpcs.calls("KV/") + rpcs.watchCreates();
    }

    /** @return the etcd requests per call of {@code variant}, over {@code n} calls of it alone (a pass of its own) */
    static double perCall(RpcCounter counter, int n, Interleaved.Variant variant) throws Exception {
        RpcCounter.Snapshot before = counter.snapshot();
        for (int i = 0; i < n; i++) {
            variant.run();
        }
        return of(counter.snapshot().minus(before)) / (double) n;
    }
}

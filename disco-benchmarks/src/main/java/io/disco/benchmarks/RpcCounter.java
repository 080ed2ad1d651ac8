package io.disco.benchmarks;

import io.etcd.jetcd.api.WatchRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the etcd RPCs a jetcd client starts, per gRPC method, and the watches it creates (one
 * {@code WatchCreateRequest} sent on a watch stream, whichever stream carries it). Passed to
 * {@code Client.builder().interceptor(...)}.
 */
final class RpcCounter implements ClientInterceptor {

    private final ConcurrentHashMap<String, LongAdder> calls = new ConcurrentHashMap<>();
    private final LongAdder watchCreates = new LongAdder();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        String name = method.getFullMethodName();
        calls.computeIfAbsent(name, k -> new LongAdder()).increment();
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void sendMessage(Q message) {
                if (message instanceof WatchRequest && ((WatchRequest) message).hasCreateRequest()) {
                    watchCreates.increment();
                }
                super.sendMessage(message);
            }
        };
    }

    /** A point-in-time copy of the counters. */
    Snapshot snapshot() {
        Map<String, Long> m = new TreeMap<>();
        calls.forEach((k, v) -> m.put(k, v.sum()));
        return new Snapshot(m, watchCreates.sum());
    }

    /** Counter values at one moment; {@link #minus} gives the RPCs of a phase. */
    record Snapshot(Map<String, Long> calls, long watchCreates) {

        /** Calls started whose full method name contains {@code part}, e.g. "KV/", "Lease/LeaseGrant". */
        long calls(String part) {
            return calls.entrySet().stream().filter(e -> e.getKey().contains(part)).mapToLong(Map.Entry::getValue).sum();
        }

        Snapshot minus(Snapshot before) {
            Map<String, Long> m = new TreeMap<>(calls);
            before.calls.forEach((k, v) -> m.merge(k, -v, Long::sum));
            return new Snapshot(m, watchCreates - before.watchCreates);
        }
    }
}

package io.disco.provider.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Counts the etcd RPCs a jetcd client starts and closes, and the messages it receives, per gRPC method. */
final class RpcCounter implements ClientInterceptor {

    private final ConcurrentHashMap<String, LongAdder> calls = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> received = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> closed = new ConcurrentHashMap<>();
    private final LongAdder progress = new LongAdder();
    private final LongAdder watchCreates = new LongAdder();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        String name = method.getFullMethodName();
        calls.computeIfAbsent(name, k -> new LongAdder()).increment();
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void sendMessage(Q message) {
                if (message instanceof io.etcd.jetcd.api.WatchRequest w && w.hasCreateRequest()) {
                    watchCreates.increment();
                }
                super.sendMessage(message);
            }

            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onMessage(R message) {
                        received.computeIfAbsent(name, k -> new LongAdder()).increment();
                        if (message instanceof io.etcd.jetcd.api.WatchResponse w && w.getEventsCount() == 0
                                && !w.getCreated() && !w.getCanceled()) {
                            progress.increment();
                        }
                        super.onMessage(message);
                    }

                    @Override
                    public void onClose(io.grpc.Status status, Metadata trailers) {
                        closed.computeIfAbsent(name, k -> new LongAdder()).increment();
                        super.onClose(status, trailers);
                    }
                }, headers);
            }
        };
    }

    /** Calls started whose method name contains {@code part} (e.g. "KV/", "Watch"). */
    long calls(String part) {
        return sum(calls, part);
    }

    /** Calls started and not closed yet whose method name contains {@code part}. */
    long open(String part) {
        return sum(calls, part) - sum(closed, part);
    }

    /** Calls closed whose method name contains {@code part}. */
    long closed(String part) {
        return sum(closed, part);
    }

    /** Messages received on calls whose method name contains {@code part}. */
    long received(String part) {
        return sum(received, part);
    }

    /** Watch progress reports received (answers to the liveness probes), included in {@link #received}. */
    long progress() {
        return progress.sum();
    }

    /** Watches created (create requests sent on any watch stream). */
    long watchCreates() {
        return watchCreates.sum();
    }

    private static long sum(ConcurrentHashMap<String, LongAdder> m, String part) {
        return m.entrySet().stream().filter(e -> e.getKey().contains(part)).mapToLong(e -> e.getValue().sum()).sum();
    }
}

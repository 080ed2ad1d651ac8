package io.disco.testservers;

import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the etcd RPCs a jetcd client starts and closes, and the messages it receives, per gRPC
 * method; also the watches it creates (one {@code WatchCreateRequest} sent on a watch stream,
 * whichever stream carries it) and the watch progress reports it receives. Register it on the
 * client under test: {@code Client.builder().interceptor(counter)}. The counts only grow; {@link
 * #snapshot()} and {@link Snapshot#minus} give the requests of one phase. Thread-safe.
 *
 * <p>A method is named by its full gRPC name, e.g. {@code etcdserverpb.KV/Txn}; every query takes
 * a part of it ({@code "KV/"}, {@code "Lease/LeaseGrant"}, {@code "Watch"}) and sums the methods
 * whose name contains it.
 *
 * <p>This is the one class of this module that needs jetcd ({@code jetcd-core}, an optional
 * dependency here: whoever uses it has jetcd already, and nobody else gets it through {@code
 * disco-test-servers}). The provider's tests and the benchmarks share it.
 */
public final class RpcCounter implements ClientInterceptor {

    private final ConcurrentHashMap<String, LongAdder> calls = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> received = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> closed = new ConcurrentHashMap<>();
    private final LongAdder progress = new LongAdder();
    private final LongAdder watchCreates = new LongAdder();

    /** A counter at zero, to be registered on one client. */
    public RpcCounter() {}

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        String name = method.getFullMethodName();
        increment(calls, name);
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void sendMessage(Q message) {
                if (message instanceof WatchRequest w && w.hasCreateRequest()) {
                    watchCreates.increment();
                }
                super.sendMessage(message);
            }

            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(
                        new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onMessage(R message) {
                                increment(received, name);
                                if (message instanceof WatchResponse w
                                        && w.getEventsCount() == 0
                                        && !w.getCreated()
                                        && !w.getCanceled()) {
                                    progress.increment();
                                }
                                super.onMessage(message);
                            }

                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                increment(closed, name);
                                super.onClose(status, trailers);
                            }
                        },
                        headers);
            }
        };
    }

    /**
     * Calls started.
     *
     * @param part a part of the method name, e.g. "KV/", "Watch"
     * @return calls started whose method name contains {@code part}
     */
    public long calls(String part) {
        return sum(calls, part);
    }

    /**
     * Calls open now.
     *
     * @param part a part of the method name, e.g. "KV/", "Watch"
     * @return calls started and not closed yet whose method name contains {@code part}
     */
    public long open(String part) {
        return sum(calls, part) - sum(closed, part);
    }

    /**
     * Calls closed.
     *
     * @param part a part of the method name, e.g. "KV/", "Watch"
     * @return calls closed whose method name contains {@code part}
     */
    public long closed(String part) {
        return sum(closed, part);
    }

    /**
     * Messages received.
     *
     * @param part a part of the method name, e.g. "KV/", "Watch"
     * @return messages received on calls whose method name contains {@code part}
     */
    public long received(String part) {
        return sum(received, part);
    }

    /** @return watch progress reports received (answers to progress requests), included in {@link #received} */
    public long progress() {
        return progress.sum();
    }

    /** @return watches created (create requests sent on any watch stream) */
    public long watchCreates() {
        return watchCreates.sum();
    }

    /** @return a point-in-time copy of the calls started per method and of the watches created */
    public Snapshot snapshot() {
        Map<String, Long> m = new TreeMap<>();
        calls.forEach((k, v) -> m.put(k, v.sum()));
        return new Snapshot(m, watchCreates.sum());
    }

    /**
     * Calls started per full method name, and watches created, at one moment; {@link #minus} gives
     * those of a phase.
     *
     * @param calls calls started per full gRPC method name
     * @param watchCreates watches created
     */
    public record Snapshot(Map<String, Long> calls, long watchCreates) {

        /**
         * Calls started.
         *
         * @param part a part of the full method name, e.g. "KV/", "Lease/LeaseGrant"
         * @return calls started whose full method name contains {@code part}
         */
        public long calls(String part) {
            return calls.entrySet().stream()
                    .filter(e -> e.getKey().contains(part))
                    .mapToLong(Map.Entry::getValue)
                    .sum();
        }

        /**
         * The difference to an earlier snapshot.
         *
         * @param before the snapshot taken at the start of the phase
         * @return the calls and watch creates since {@code before} (this snapshot's counts less its)
         */
        public Snapshot minus(Snapshot before) {
            Map<String, Long> m = new TreeMap<>(calls);
            before.calls.forEach((k, v) -> m.merge(k, -v, Long::sum));
            return new Snapshot(m, watchCreates - before.watchCreates);
        }
    }

    private static void increment(ConcurrentHashMap<String, LongAdder> counts, String name) {
        LongAdder n = counts.get(name);
        if (n == null) {
            n = counts.computeIfAbsent(name, k -> new LongAdder());
        }
        n.increment();
    }

    private static long sum(ConcurrentHashMap<String, LongAdder> counts, String part) {
        return counts.entrySet().stream()
                .filter(e -> e.getKey().contains(part))
                .mapToLong(e -> e.getValue().sum())
                .sum();
    }
}

package io.disco.provider.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Delays, or drops, what etcd answers to the calls of one gRPC method, as a slow network or a frozen
 * member would: the request reaches etcd and is applied; only the client hears of it late, or never.
 * Answers keep their order.
 */
final class DelayingInterceptor implements ClientInterceptor, AutoCloseable {

    private final String method;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "delaying-interceptor");
        t.setDaemon(true);
        return t;
    });
    private volatile long delayMs;
    private volatile boolean drop;

    /** @param method a part of the full gRPC method name, e.g. "LeaseGrant" */
    DelayingInterceptor(String method) {
        this.method = method;
    }

    DelayingInterceptor delay(long ms) {
        this.delayMs = ms;
        return this;
    }

    DelayingInterceptor drop(boolean drop) {
        this.drop = drop;
        return this;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> m, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(m, options);
        if (!m.getFullMethodName().contains(method)) {
            return call;
        }
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(
                        new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(Metadata h) {
                                later(() -> super.onHeaders(h));
                            }

                            @Override
                            public void onMessage(R message) {
                                if (!drop) {
                                    later(() -> super.onMessage(message));
                                }
                            }

                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                later(() -> super.onClose(status, trailers));
                            }

                            @Override
                            public void onReady() {
                                later(super::onReady);
                            }
                        },
                        headers);
            }
        };
    }

    private void later(Runnable r) {
        timer.schedule(r, delayMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}

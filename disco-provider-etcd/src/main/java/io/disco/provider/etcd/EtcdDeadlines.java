package io.disco.provider.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A real gRPC deadline for every unary etcd request of a jetcd client. Register it when building the
 * client: {@code Client.builder().endpoints(...).interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5))).build()}.
 *
 * <p>Why: jetcd sends unary requests without a deadline, so a request to a member that stops
 * answering (frozen, or partitioned with its TCP connection up) stays open on the client, and on
 * that member, for as long as the member is away; this library's request timeout only stops waiting
 * for it. With a deadline, gRPC cancels the call when it passes, on the client and (once it reads
 * again) on the server. A deadline does not make a write's outcome known: a member may have proposed
 * it before the cancellation arrives. That case is this library's own to handle; see
 * {@code LateCreates} in the design notes of the README.
 *
 * <p>Streams (watches, lease keepalives) are left alone: they are long-lived by design. A call that
 * already carries a deadline keeps it. Use a value at least as long as the longest
 * {@link EtcdOptions.Builder#requestTimeout request timeout} of the sessions on the client.
 */
public final class EtcdDeadlines {

    private EtcdDeadlines() {}

    /**
     * @param timeout the deadline of each unary call, counted from its start; positive
     * @return an interceptor for {@code ClientBuilder.interceptor(...)}
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public static ClientInterceptor unary(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        long nanos = timeout.toNanos();
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                    MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                if (method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
                    options = options.withDeadlineAfter(nanos, TimeUnit.NANOSECONDS);
                }
                return next.newCall(method, options);
            }
        };
    }
}

package io.disco.examples.lock.grpc.pb;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * {@code lock/grpc/pb}: the {@code disco.examples.Resource} gRPC service, defined in plain Java with
 * a JSON marshaller (no protoc, no generated code). One unary method:
 * <pre>
 * rpc Write(WriteRequest) returns (WriteReply)   // WriteRequest {owner, data}, WriteReply {token, message}
 * </pre>
 * The fencing token travels in the {@code x-fencing-token} metadata, not in the message.
 */
public final class ResourceGrpc {

    /** The service's full name. */
    public static final String SERVICE = "disco.examples.Resource";

    /**
     * The request of {@code Write}.
     *
     * @param owner who writes
     * @param data what to write
     */
    public record WriteRequest(String owner, String data) {}

    /**
     * The reply of {@code Write}.
     *
     * @param token the fencing token the resource accepted
     * @param message what the resource did
     */
    public record WriteReply(long token, String message) {}

    /** The {@code Write} method, JSON on the wire. */
    public static final MethodDescriptor<WriteRequest, WriteReply> WRITE =
            MethodDescriptor.<WriteRequest, WriteReply>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Write"))
                    .setRequestMarshaller(Json.marshaller(
                            r -> Json.object("owner", r.owner(), "data", r.data()),
                            m -> new WriteRequest(Json.string(m, "owner"), Json.string(m, "data"))))
                    .setResponseMarshaller(Json.marshaller(
                            r -> Json.object("token", r.token(), "message", r.message()),
                            m -> new WriteReply(Json.number(m, "token"), Json.string(m, "message"))))
                    .build();

    /** The server side of the service. */
    @FunctionalInterface
    public interface Handler {
        /**
         * Handles one write; throw {@link io.grpc.StatusRuntimeException} to fail the call.
         *
         * @param request the request
         * @return the reply
         */
        WriteReply write(WriteRequest request);
    }

    private ResourceGrpc() {}

    /**
     * Binds a handler to the service definition a gRPC server serves.
     *
     * @param handler the implementation
     * @return the service definition
     */
    public static ServerServiceDefinition bindService(Handler handler) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    WriteReply reply;
                    try {
                        reply = handler.write(request);
                    } catch (RuntimeException e) {
                        response.onError(e);
                        return;
                    }
                    response.onNext(reply);
                    response.onCompleted();
                }))
                .build();
    }

    /**
     * Calls {@code Write} and waits for the reply.
     *
     * @param channel the channel, usually intercepted to carry the fencing token
     * @param request the request
     * @param deadline how long to wait
     * @return the reply
     * @throws io.grpc.StatusRuntimeException if the call fails (ABORTED for a stale token)
     */
    public static WriteReply write(Channel channel, WriteRequest request, Duration deadline) {
        return ClientCalls.blockingUnaryCall(
                channel,
                WRITE,
                CallOptions.DEFAULT.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS),
                request);
    }
}

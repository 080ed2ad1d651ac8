package io.disco.fencing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Carries a fencing token in the gRPC metadata entry {@code x-fencing-token} ({@link #KEY}): stamping
 * it on outgoing calls and parsing it on the receiving side.
 *
 * <p>This class needs {@code io.grpc:grpc-api} on the class path; disco-fencing declares it as an
 * optional dependency, so gRPC users bring their own gRPC.
 */
public final class FencingGrpc {

    /** The metadata key that carries the token, as its canonical decimal text. */
    public static final Metadata.Key<String> KEY = Metadata.Key.of("x-fencing-token", Metadata.ASCII_STRING_MARSHALLER);

    private static final String FIELD = "x-fencing-token metadata";

    private FencingGrpc() {}

    /**
     * A new metadata object holding {@code token} under {@link #KEY} and nothing else, for
     * {@code MetadataUtils.newAttachHeadersInterceptor} or similar.
     *
     * @param token the token to carry
     * @return new, mutable metadata
     */
    public static Metadata metadata(FencingToken token) {
        Metadata metadata = new Metadata();
        metadata.put(KEY, token.toString());
        return metadata;
    }

    /**
     * A client interceptor that stamps {@code token} on every call it intercepts, replacing any
     * {@link #KEY} value the call already carried.
     *
     * @param token the token of the grant or leadership the calls are made under
     * @return the interceptor
     */
    public static ClientInterceptor clientInterceptor(FencingToken token) {
        Objects.requireNonNull(token, "token");
        return clientInterceptor(() -> token);
    }

    /**
     * A client interceptor that stamps every call it intercepts with the token {@code current}
     * supplies when the call starts, replacing any {@link #KEY} value the call already carried. Use
     * it on a long-lived channel whose calls must follow the current grant or leadership.
     *
     * <p>If {@code current} returns {@code null} (there is no current grant) the call is not sent:
     * its {@code start} throws a {@link NullPointerException}, which blocking and future stubs
     * report to the caller.
     *
     * @param current supplies the token to stamp; called once per call, on the thread that starts it
     * @return the interceptor
     */
    public static ClientInterceptor clientInterceptor(Supplier<FencingToken> current) {
        Objects.requireNonNull(current, "current");
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
                    MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                    @Override
                    public void start(Listener<RespT> responseListener, Metadata headers) {
                        FencingToken token =
                                Objects.requireNonNull(current.get(), "the fencing token supplier returned null");
                        headers.discardAll(KEY);
                        headers.put(KEY, token.toString());
                        super.start(responseListener, headers);
                    }
                };
            }
        };
    }

    /**
     * Parses the token a call carries. Exactly one {@link #KEY} value must be present, and it must
     * be valid for {@link FencingToken#parse(CharSequence)}.
     *
     * @param headers the call's received metadata
     * @return the token
     * @throws MalformedTokenException if the entry is missing, repeated, or its value is malformed;
     *     the message says which and is safe to return to the client
     */
    public static FencingToken fromMetadata(Metadata headers) {
        return FencingToken.parseSingle(headers.getAll(KEY), FIELD);
    }
}

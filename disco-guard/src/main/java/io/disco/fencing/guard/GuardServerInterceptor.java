package io.disco.fencing.guard;

import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.Optional;

/**
 * A gRPC {@link ServerInterceptor} that lets a call through only if its {@code x-fencing-token}
 * metadata ({@link FencingGrpc#KEY}) carries a token its {@link Guard} accepts.
 *
 * <p>The token is checked once per call, when the call arrives and before the method's handler
 * starts, so unary and streaming methods are guarded alike:
 * <ul>
 *   <li>no entry, more than one entry, or a value {@link FencingGrpc#fromMetadata(Metadata)}
 *       rejects: the call is closed with {@link Status#INVALID_ARGUMENT};</li>
 *   <li>a token lower than the guard's mark: closed with {@link Status#ABORTED};</li>
 *   <li>otherwise the token is accepted (the mark advances to it) and the call proceeds with the
 *       token in the {@link Context} under {@link #TOKEN}, where the handler finds it through
 *       {@link #currentToken()}.</li>
 * </ul>
 * A rejected call's status description is a one-line reason; its handler is never started, and the
 * mark does not change.
 *
 * <p>This class needs {@code io.grpc:grpc-api} on the class path (an optional dependency of
 * disco-guard).
 */
public final class GuardServerInterceptor implements ServerInterceptor {

    /** The context key under which an accepted call's token is visible to its handler. */
    public static final Context.Key<FencingToken> TOKEN = Context.key("io.disco.fencing.token");

    private final Guard guard;

    /**
     * An interceptor that checks tokens against {@code guard}.
     *
     * @param guard the guard of the protected resource
     */
    public GuardServerInterceptor(Guard guard) {
        this.guard = Objects.requireNonNull(guard, "guard");
    }

    /**
     * The guard this interceptor checks tokens against.
     *
     * @return the guard
     */
    public Guard guard() {
        return guard;
    }

    /**
     * The token of the guarded call the current thread is serving: {@code TOKEN.get()}.
     *
     * @return the accepted token, or empty outside a call accepted by a {@code GuardServerInterceptor}
     */
    public static Optional<FencingToken> currentToken() {
        return Optional.ofNullable(TOKEN.get());
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        FencingToken token;
        try {
            token = guard.check(FencingGrpc.fromMetadata(headers));
        } catch (MalformedTokenException e) {
            return reject(call, Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        } catch (TokenStaleException e) {
            return reject(call, Status.ABORTED.withDescription(e.getMessage()));
        }
        return Contexts.interceptCall(Context.current().withValue(TOKEN, token), call, headers, next);
    }

    private static <ReqT> ServerCall.Listener<ReqT> reject(ServerCall<ReqT, ?> call, Status status) {
        call.close(status, new Metadata());
        return new ServerCall.Listener<>() {
        };
    }
}

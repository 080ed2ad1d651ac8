package io.disco.fencing.guard;

import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * A gRPC {@link ServerInterceptor} that lets a call through only if its {@code x-fencing-token}
 * metadata ({@link FencingGrpc#KEY}) carries a token its {@link Guard} admits, so that calls run in
 * token order (see {@link Guard#admit}):
 * <ul>
 *   <li>no entry, more than one entry, or a value {@link FencingGrpc#fromMetadata(Metadata)}
 *       rejects: the call is closed with {@link Status#INVALID_ARGUMENT}; so is a call of a keyed
 *       interceptor whose key function names no key;</li>
 *   <li>a token lower than the guard's mark: closed with {@link Status#ABORTED};</li>
 *   <li>a token above the coordination service's current revision, for a guard built with an
 *       {@link IssuedBound} ({@link TokenNotIssuedException}): closed with
 *       {@link Status#INVALID_ARGUMENT}, like a malformed token: nobody issued it, so it is the
 *       caller's own error and retrying the same call cannot succeed ({@code ABORTED} would tell it
 *       that a newer owner holds the resource, {@code UNAVAILABLE} would invite a retry);</li>
 *   <li>calls with older tokens still running after the guard's drain timeout, the guard's store
 *       failing, a token above the confirmed bound that the coordination service could not confirm
 *       in time ({@link BoundUnavailableException}), or the thread interrupted while waiting: closed
 *       with {@link Status#UNAVAILABLE}; nothing of the call ran and the client may retry;</li>
 *   <li>otherwise the token is admitted and the call proceeds with the token in the
 *       {@link Context} under {@link #TOKEN}, where the handler finds it through
 *       {@link #currentToken()}.</li>
 * </ul>
 * How long an admission lasts depends on the method type:
 * <ul>
 *   <li>unary and server-streaming: from the call's start until the handler closes the call, or the
 *       call completes or is cancelled, whichever comes first;</li>
 *   <li>client-streaming and bidi: the token is checked when the call starts, and each inbound
 *       message and the half-close is delivered to the handler under an admission of its own, closed
 *       when the handler's {@code onMessage} (or {@code onHalfClose}) returns. A message that arrives
 *       after a higher token was seen closes the call with {@link Status#ABORTED} and is not
 *       delivered, so a long stream holds a newer owner back for at most one message's handling.</li>
 * </ul>
 * A rejected call's status description is a one-line reason; its handler is never started (or, for
 * a stale message, never sees the message), and the mark does not change.
 *
 * <p>A higher token's call waits for older calls, and for the confirmation of its token when the
 * guard has an {@link IssuedBound}, in {@code interceptCall} (or in the delivery of its message), on
 * the server's executor: keep the default executor, not a direct one, so that the wait
 * does not block a transport thread.
 *
 * <p>This class needs {@code io.grpc:grpc-api} on the class path (an optional dependency of
 * disco-guard).
 */
public final class GuardServerInterceptor implements ServerInterceptor {

    /** The context key under which an accepted call's token is visible to its handler. */
    public static final Context.Key<FencingToken> TOKEN = Context.key("io.disco.fencing.token");

    private final Guard guard;
    private final KeyedGuard keyed;
    private final BiFunction<ServerCall<?, ?>, Metadata, String> keyOf;

    /**
     * An interceptor that admits calls with {@code guard}.
     *
     * @param guard the guard of the protected resource
     */
    public GuardServerInterceptor(Guard guard) {
        this.guard = Objects.requireNonNull(guard, "guard");
        this.keyed = null;
        this.keyOf = null;
    }

    /**
     * An interceptor with one mark per resource key: each call is admitted by the guard of the key
     * that {@code keyOf} names for it.
     *
     * @param guards the keyed guard of the protected resources
     * @param keyOf names the key of a call from the call (its method) and its metadata; a null or
     *     blank answer closes the call with {@link Status#INVALID_ARGUMENT}
     */
    public GuardServerInterceptor(KeyedGuard guards, BiFunction<ServerCall<?, ?>, Metadata, String> keyOf) {
        this.guard = null;
        this.keyed = Objects.requireNonNull(guards, "guards");
        this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
    }

    /**
     * The guard this interceptor admits calls with.
     *
     * @return the guard
     * @throws IllegalStateException if the interceptor is keyed (it has a guard per key)
     */
    public Guard guard() {
        if (guard == null) {
            throw new IllegalStateException("a keyed GuardServerInterceptor has one guard per key");
        }
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
        Guard g;
        try {
            token = FencingGrpc.fromMetadata(headers);
            g = guardOf(call, headers);
        } catch (MalformedTokenException e) {
            malformed();
            return reject(call, Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        }
        if (g == null) {
            malformed();
            return reject(call, Status.INVALID_ARGUMENT.withDescription("no resource key in this call"));
        }
        Context context = Context.current().withValue(TOKEN, token);
        MethodType type = call.getMethodDescriptor().getType();
        if (type.clientSendsOneMessage()) {
            Guard.Admission admission;
            try {
                admission = g.admit(token);
            } catch (RuntimeException | InterruptedException e) {
                return reject(call, refusal(e));
            }
            return new WholeCall<>(
                    admission, Contexts.interceptCall(context, new ClosingCall<>(call, admission), headers, next));
        }
        try {
            g.check(token);
        } catch (RuntimeException e) {
            return reject(call, refusal(e));
        }
        return new PerMessage<>(Contexts.interceptCall(context, call, headers, next), call, g, token);
    }

    private void malformed() {
        if (keyed != null) {
            keyed.malformed();
        } else {
            guard.malformed();
        }
    }

    /** The guard of this call, or null if a keyed interceptor's function names no key. */
    private Guard guardOf(ServerCall<?, ?> call, Metadata headers) {
        if (keyed == null) {
            return guard;
        }
        String key = keyOf.apply(call, headers);
        return key == null || key.isBlank() ? null : keyed.forKey(key);
    }

    /** The status a refused admission closes its call with; rethrows what is no refusal. */
    private static Status refusal(Exception e) {
        if (e instanceof TokenStaleException) {
            return Status.ABORTED.withDescription(e.getMessage());
        }
        if (e instanceof TokenNotIssuedException) {
            return Status.INVALID_ARGUMENT.withDescription(e.getMessage());
        }
        if (e instanceof DrainTimeoutException
                || e instanceof BoundUnavailableException
                || e instanceof UncheckedIOException) {
            return Status.UNAVAILABLE.withDescription(e.getMessage());
        }
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return Status.UNAVAILABLE.withDescription("interrupted while waiting for older calls to finish; retry");
        }
        throw (RuntimeException) e;
    }

    private static <ReqT> ServerCall.Listener<ReqT> reject(ServerCall<ReqT, ?> call, Status status) {
        call.close(status, new Metadata());
        return new ServerCall.Listener<>() {};
    }

    /** Ends a unary or server-streaming call's admission when the handler closes the call. */
    private static final class ClosingCall<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        private final Guard.Admission admission;

        ClosingCall(ServerCall<ReqT, RespT> call, Guard.Admission admission) {
            super(call);
            this.admission = admission;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            try {
                super.close(status, trailers);
            } finally {
                admission.close();
            }
        }
    }

    /**
     * Ends a unary or server-streaming call's admission when the call completes or is cancelled, or
     * when a handler method throws (gRPC then closes the call without going through {@link ClosingCall}).
     */
    private static final class WholeCall<ReqT> extends SimpleForwardingServerCallListener<ReqT> {
        private final Guard.Admission admission;

        WholeCall(Guard.Admission admission, ServerCall.Listener<ReqT> delegate) {
            super(delegate);
            this.admission = admission;
        }

        @Override
        public void onMessage(ReqT message) {
            closeIfThrows(() -> super.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            closeIfThrows(super::onHalfClose);
        }

        @Override
        public void onReady() {
            closeIfThrows(super::onReady);
        }

        @Override
        public void onCancel() {
            try {
                super.onCancel();
            } finally {
                admission.close();
            }
        }

        @Override
        public void onComplete() {
            try {
                super.onComplete();
            } finally {
                admission.close();
            }
        }

        private void closeIfThrows(Runnable step) {
            try {
                step.run();
            } catch (RuntimeException | Error e) {
                admission.close();
                throw e;
            }
        }
    }

    /** A client-streaming or bidi call: each message and the half-close under an admission of its own. */
    private static final class PerMessage<ReqT> extends SimpleForwardingServerCallListener<ReqT> {
        private final ServerCall<ReqT, ?> call;
        private final Guard guard;
        private final FencingToken token;
        private boolean closed; // the listener's methods are called one at a time

        PerMessage(ServerCall.Listener<ReqT> delegate, ServerCall<ReqT, ?> call, Guard guard, FencingToken token) {
            super(delegate);
            this.call = call;
            this.guard = guard;
            this.token = token;
        }

        @Override
        public void onMessage(ReqT message) {
            admitted(() -> super.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            admitted(super::onHalfClose);
        }

        private void admitted(Runnable step) {
            if (closed) {
                return;
            }
            Guard.Admission admission;
            try {
                admission = guard.admit(token);
            } catch (RuntimeException | InterruptedException e) {
                closed = true;
                call.close(refusal(e), new Metadata());
                return;
            }
            try (admission) {
                step.run();
            }
        }
    }
}

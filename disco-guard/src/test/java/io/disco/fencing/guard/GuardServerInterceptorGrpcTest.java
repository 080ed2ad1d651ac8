package io.disco.fencing.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingToken;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GuardServerInterceptor} on a real gRPC (Netty) server on loopback, with a hand-written
 * service of one unary and one server-streaming method (no protoc), called through
 * {@link FencingGrpc#clientInterceptor} or with hand-made metadata.
 */
class GuardServerInterceptorGrpcTest {

    private static final String PLAIN = "a fencing token is a plain decimal number";

    private static final String SERVICE = TextRpc.SERVICE;
    private static final MethodDescriptor<String, String> WRITE = method(MethodDescriptor.MethodType.UNARY, "Write");
    private static final MethodDescriptor<String, String> READ =
            method(MethodDescriptor.MethodType.SERVER_STREAMING, "Read");

    private static Server server;
    private static ManagedChannel channel;
    private static Guard guard;
    private static final AtomicInteger handlerCalls = new AtomicInteger();

    private static MethodDescriptor<String, String> method(MethodDescriptor.MethodType type, String name) {
        return TextRpc.method(type, name);
    }

    @BeforeAll
    static void start() throws IOException {
        guard = Guard.withInitialToken(10);
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    handlerCalls.incrementAndGet();
                    response.onNext(request + " under "
                            + GuardServerInterceptor.currentToken().orElseThrow());
                    response.onCompleted();
                }))
                .addMethod(READ, ServerCalls.asyncServerStreamingCall((request, response) -> {
                    handlerCalls.incrementAndGet();
                    FencingToken token = GuardServerInterceptor.currentToken().orElseThrow();
                    for (int i = 1; i <= 3; i++) {
                        response.onNext(request + " " + i + " under " + token);
                    }
                    response.onCompleted();
                }))
                .build();
        server = TextRpc.serve(service, new GuardServerInterceptor(guard));
        channel = TextRpc.channelTo(server);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    /** Calls one method and returns every response message. */
    enum Call implements Function<Channel, List<String>> {
        UNARY {
            @Override
            public List<String> apply(Channel ch) {
                return List.of(ClientCalls.blockingUnaryCall(ch, WRITE, options(), "write"));
            }
        },
        SERVER_STREAMING {
            @Override
            public List<String> apply(Channel ch) {
                List<String> all = new ArrayList<>();
                Iterator<String> it = ClientCalls.blockingServerStreamingCall(ch, READ, options(), "read");
                it.forEachRemaining(all::add);
                return all;
            }
        };

        List<String> expected(FencingToken token) {
            return this == UNARY
                    ? List.of("write under " + token)
                    : List.of("read 1 under " + token, "read 2 under " + token, "read 3 under " + token);
        }

        private static CallOptions options() {
            return CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
        }
    }

    static Stream<Arguments> malformed() {
        List<Object[]> cases = List.of(
                new Object[] {List.of(), "missing x-fencing-token metadata"},
                new Object[] {List.of("11", "12"), "repeated x-fencing-token metadata: send exactly one fencing token"},
                new Object[] {List.of("11", "11"), "repeated x-fencing-token metadata: send exactly one fencing token"},
                new Object[] {List.of(""), "fencing token is empty"},
                new Object[] {List.of("-1"), "fencing token has a sign '-' at index 0: " + PLAIN},
                new Object[] {List.of("+11"), "fencing token has a sign '+' at index 0: " + PLAIN},
                new Object[] {List.of("0"), "fencing token must be at least 1, got 0"},
                new Object[] {List.of("011"), "fencing token has a leading zero: write it without one"},
                new Object[] {List.of("0x10"), "fencing token has an invalid character 'x' at index 1: " + PLAIN},
                new Object[] {List.of("9223372036854775808"), "fencing token overflows 9223372036854775807"},
                new Object[] {List.of("1e3"), "fencing token has an invalid character 'e' at index 1: " + PLAIN},
                new Object[] {List.of("11 12"), "fencing token has whitespace at index 2: " + PLAIN},
                // unlike an HTTP/1.1 server, gRPC does not trim metadata values: the space arrives
                new Object[] {List.of(" 11"), "fencing token has whitespace at index 0: " + PLAIN},
                // a tab is not allowed in an ASCII metadata value; grpc-java drops the entry in transit
                new Object[] {List.of("11\t"), "missing x-fencing-token metadata"},
                new Object[] {List.of("abc"), "fencing token has an invalid character 'a' at index 0: " + PLAIN});
        return Stream.of(Call.values()).flatMap(call -> cases.stream().map(c -> Arguments.of(call, c[0], c[1])));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("malformed")
    void missingOrMalformedTokenIsInvalidArgument(Call call, List<String> values, String reason) {
        Metadata headers = new Metadata();
        values.forEach(v -> headers.put(FencingGrpc.KEY, v));
        assertRejected(
                call,
                ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers)),
                Status.Code.INVALID_ARGUMENT,
                reason);
    }

    @ParameterizedTest
    @MethodSource("calls")
    void staleTokenIsAborted(Call call) {
        long mark = guard.highWater().orElseThrow().value();
        assertRejected(
                call,
                ClientInterceptors.intercept(channel, FencingGrpc.clientInterceptor(FencingToken.of(mark - 1))),
                Status.Code.ABORTED,
                "stale fencing token " + (mark - 1) + ": the resource has already accepted " + mark);
    }

    @ParameterizedTest
    @MethodSource("calls")
    void freshTokenReachesTheHandlerThroughTheContext(Call call) {
        FencingToken fresh = FencingToken.of(guard.highWater().orElseThrow().value() + 100);
        Channel ch = ClientInterceptors.intercept(channel, FencingGrpc.clientInterceptor(fresh));
        int calls = handlerCalls.get();
        assertEquals(call.expected(fresh), call.apply(ch));
        assertEquals(call.expected(fresh), call.apply(ch), "the same token passes again");
        assertEquals(calls + 2, handlerCalls.get());
        assertEquals(Optional.of(fresh), guard.highWater());
    }

    static Stream<Call> calls() {
        return Stream.of(Call.values());
    }

    @Test
    void clientInterceptorReplacesATokenTheCallAlreadyCarried() {
        FencingToken fresh = FencingToken.of(guard.highWater().orElseThrow().value() + 1);
        // the attaching interceptor runs first and adds "1"; the fencing interceptor then replaces it
        Channel ch = ClientInterceptors.intercept(
                channel,
                FencingGrpc.clientInterceptor(fresh),
                MetadataUtils.newAttachHeadersInterceptor(FencingGrpc.metadata(FencingToken.of(1))));
        assertEquals(Call.UNARY.expected(fresh), Call.UNARY.apply(ch));
    }

    @Test
    void supplierInterceptorFollowsTheCurrentGrant() {
        FencingToken first = FencingToken.of(guard.highWater().orElseThrow().value() + 1);
        FencingToken second = FencingToken.of(first.value() + 1);
        AtomicReference<FencingToken> current = new AtomicReference<>(first);
        Channel ch = ClientInterceptors.intercept(channel, FencingGrpc.clientInterceptor(current::get));

        assertEquals(Call.UNARY.expected(first), Call.UNARY.apply(ch));
        current.set(second);
        assertEquals(Call.SERVER_STREAMING.expected(second), Call.SERVER_STREAMING.apply(ch));
        // a zombie still holding the first grant is turned away
        current.set(first);
        assertRejected(
                Call.UNARY,
                ch,
                Status.Code.ABORTED,
                "stale fencing token " + first + ": the resource has already accepted " + second);
        // no current grant: the call is never sent
        current.set(null);
        int calls = handlerCalls.get();
        assertThrows(NullPointerException.class, () -> Call.UNARY.apply(ch));
        assertEquals(calls, handlerCalls.get());
    }

    @Test
    void currentTokenIsEmptyOutsideAGuardedCall() {
        assertEquals(Optional.empty(), GuardServerInterceptor.currentToken());
    }

    private static void assertRejected(Call call, Channel ch, Status.Code code, String reason) {
        Optional<FencingToken> markBefore = guard.highWater();
        int callsBefore = handlerCalls.get();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call.apply(ch));
        assertEquals(code, e.getStatus().getCode());
        assertEquals(reason, e.getStatus().getDescription());
        assertEquals(markBefore, guard.highWater(), "the mark must not move on a rejection");
        assertEquals(callsBefore, handlerCalls.get(), "the handler must not run on a rejection");
    }
}

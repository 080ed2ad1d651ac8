package io.disco.fencing.guard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingToken;
import io.disco.testservers.ThreadPerTask;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ordered admission through {@link GuardServerInterceptor} on a real gRPC server: unary calls hold
 * their admission until closed, client streams are checked at every message.
 *
 * <p>Every write appends {@code "<token>:<message>"} to the history. A unary request {@code hold:NAME}
 * waits on the latch {@code NAME} before writing; {@code fail} throws.
 */
class GuardOrderGrpcTest {

    /** A thread per task: these tasks block. */
    private static final java.util.concurrent.Executor THREADS = ThreadPerTask.DAEMON;

    private static final MethodDescriptor<String, String> WRITE = TextRpc.method(MethodType.UNARY, "Write");
    private static final MethodDescriptor<String, String> APPEND =
            TextRpc.method(MethodType.CLIENT_STREAMING, "Append");

    private final List<String> history = new CopyOnWriteArrayList<>();
    private final Holds holds = new Holds();
    private Guard guard;
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        guard = Guard.builder().drainTimeout(Duration.ofMillis(1500)).build();
        ServerServiceDefinition service = ServerServiceDefinition.builder(TextRpc.SERVICE)
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    FencingToken token = GuardServerInterceptor.currentToken().orElseThrow();
                    if (request.equals("fail")) {
                        throw new IllegalStateException("handler failed");
                    }
                    if (request.startsWith("hold:")) {
                        holds.hold(request.substring(5));
                    }
                    history.add(token.value() + ":" + request);
                    response.onNext("ok");
                    response.onCompleted();
                }))
                .addMethod(APPEND, ServerCalls.asyncClientStreamingCall(response -> new StreamObserver<String>() {
                    private final FencingToken token =
                            GuardServerInterceptor.currentToken().orElseThrow();

                    @Override
                    public void onNext(String message) {
                        history.add(token.value() + ":" + message);
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {
                        response.onNext("ok");
                        response.onCompleted();
                    }
                }))
                .build();
        server = TextRpc.serve(service, new GuardServerInterceptor(guard));
        channel = TextRpc.channelTo(server);
    }

    @AfterEach
    void stop() throws InterruptedException {
        holds.releaseAll();
        channel.shutdownNow().awaitTermination(10, SECONDS);
        server.shutdownNow().awaitTermination(10, SECONDS);
    }

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(20, SECONDS);
    }

    private io.grpc.Channel as(long token) {
        Metadata md = new Metadata();
        md.put(FencingGrpc.KEY, Long.toString(token));
        return io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private CompletableFuture<String> write(long token, String request) {
        return CompletableFuture.supplyAsync(
                () -> ClientCalls.blockingUnaryCall(as(token), WRITE, options(), request), THREADS);
    }

    /**
     * Starts {@code call} (no headers of its own, one response asked for) and sends its first message.
     *
     * @return what completes with the status the call is closed with
     */
    private static CompletableFuture<Status> startWith(ClientCall<String, String> call, String firstMessage) {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        call.start(
                new ClientCall.Listener<>() {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        closed.complete(status);
                    }
                },
                new Metadata());
        call.request(1);
        call.sendMessage(firstMessage);
        return closed;
    }

    /** The new owner's call (token 6) is answered before the drain timeout: no call of 5 holds its admission now. */
    private void assertNotHeldBack(String message) throws Exception {
        long start = System.nanoTime();
        assertEquals("ok", write(6, "next").get(20, SECONDS));
        assertTrue(System.nanoTime() - start < Duration.ofMillis(1500).toNanos(), message);
    }

    private static Status.Code codeOf(CompletableFuture<String> call) {
        Exception e = assertThrows(Exception.class, () -> call.get(20, SECONDS));
        Throwable cause = e.getCause();
        assertTrue(cause instanceof StatusRuntimeException, String.valueOf(cause));
        return ((StatusRuntimeException) cause).getStatus().getCode();
    }

    @Test
    void theZombiesSlowCallWritesBeforeTheNewOwnersNeverAfter() throws Exception {
        CompletableFuture<String> zombie = write(5, "hold:zombie");
        assertTrue(holds.awaitEntered("zombie"));
        CompletableFuture<String> owner = write(6, "new");
        await().atMost(Duration.ofSeconds(5)).until(() -> guard.highWater().equals(Optional.of(FencingToken.of(6))));
        assertEquals(Status.Code.ABORTED, codeOf(write(5, "late")), "the zombie's next call is rejected at once");
        assertFalse(owner.isDone(), "the new owner waits while the zombie's call is running");
        holds.release("zombie");
        assertEquals("ok", zombie.get(20, SECONDS));
        assertEquals("ok", owner.get(20, SECONDS));
        assertEquals(List.of("5:hold:zombie", "6:new"), history);
    }

    @Test
    void afterTheDrainTimeoutTheNewOwnerIsRefusedUnavailableAndNothingOfItRuns() throws Exception {
        CompletableFuture<String> zombie = write(5, "hold:zombie");
        assertTrue(holds.awaitEntered("zombie"));
        assertEquals(Status.Code.UNAVAILABLE, codeOf(write(6, "new")));
        holds.release("zombie");
        assertEquals("ok", zombie.get(20, SECONDS));
        assertEquals(List.of("5:hold:zombie"), history);
        assertEquals("ok", write(6, "retry").get(20, SECONDS));
    }

    @Test
    void aFailedHandlerReleasesItsAdmission() throws Exception {
        assertEquals(Status.Code.UNKNOWN, codeOf(write(5, "fail")));
        assertNotHeldBack("6 did not wait for the failed 5");
    }

    @Test
    void aCancelledCallReleasesItsAdmission() throws Exception {
        ClientCall<String, String> call = as(5).newCall(WRITE, options());
        CompletableFuture<Status> closed = startWith(call, "hold:zombie");
        call.halfClose();
        assertTrue(holds.awaitEntered("zombie"));
        call.cancel("client gives up", null);
        assertEquals(Status.Code.CANCELLED, closed.get(5, SECONDS).getCode());
        holds.release("zombie"); // the blocked handler returns; its call is already cancelled
        assertNotHeldBack("6 did not wait for the cancelled 5");
    }

    @Test
    void aClientStreamOpenedWithAnOldTokenIsClosedAtItsFirstMessageAfterTheNewOwnerWasAccepted() throws Exception {
        ClientCall<String, String> stream = as(5).newCall(APPEND, options());
        CompletableFuture<Status> closed = startWith(stream, "first");
        await().atMost(Duration.ofSeconds(5)).until(() -> history.contains("5:first"));
        assertEquals("ok", write(6, "new").get(20, SECONDS), "the open stream does not hold the new owner back");
        stream.sendMessage("after");
        Status status = closed.get(5, SECONDS);
        assertEquals(Status.Code.ABORTED, status.getCode());
        assertTrue(status.getDescription().contains("stale fencing token 5"), status.getDescription());
        assertEquals(List.of("5:first", "6:new"), history, "the stale message was not delivered");
    }

    @Test
    void aKeyedInterceptorKeepsOneMarkPerLock() throws Exception {
        Metadata.Key<String> lockKey = Metadata.Key.of("x-lock", Metadata.ASCII_STRING_MARSHALLER);
        KeyedGuard guards = KeyedGuard.create();
        ServerServiceDefinition service = ServerServiceDefinition.builder(TextRpc.SERVICE)
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    response.onNext(request + " under "
                            + GuardServerInterceptor.currentToken().orElseThrow());
                    response.onCompleted();
                }))
                .build();
        Server keyed =
                TextRpc.serve(service, new GuardServerInterceptor(guards, (call, headers) -> headers.get(lockKey)));
        ManagedChannel ch = TextRpc.channelTo(keyed);
        try {
            java.util.function.BiFunction<String, Long, Status.Code> write = (lock, token) -> {
                Metadata md = new Metadata();
                md.put(FencingGrpc.KEY, Long.toString(token));
                if (lock != null) {
                    md.put(lockKey, lock);
                }
                try {
                    ClientCalls.blockingUnaryCall(
                            io.grpc.ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(md)),
                            WRITE,
                            options(),
                            "w");
                    return Status.Code.OK;
                } catch (StatusRuntimeException e) {
                    return e.getStatus().getCode();
                }
            };
            assertEquals(Status.Code.OK, write.apply("a", 10L));
            assertEquals(Status.Code.OK, write.apply("b", 11L));
            assertEquals(Status.Code.OK, write.apply("a", 10L), "b's higher token does not reject a's owner");
            assertEquals(Status.Code.OK, write.apply("a", 12L));
            assertEquals(Status.Code.ABORTED, write.apply("a", 10L), "a's zombie");
            assertEquals(Status.Code.OK, write.apply("b", 11L));
            assertEquals(Status.Code.INVALID_ARGUMENT, write.apply(null, 13L), "no key");
        } finally {
            ch.shutdownNow().awaitTermination(10, SECONDS);
            keyed.shutdownNow().awaitTermination(10, SECONDS);
        }
    }
}

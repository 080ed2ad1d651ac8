package io.disco.provider.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.GuardServerInterceptor;
import io.disco.fencing.guard.GuardStore;
import io.disco.fencing.guard.IssuedBound;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdTls;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A token no coordination service issued ({@code 2^63-1}) cannot poison a guard built with
 * {@link EtcdIssuedBound}, against a real etcd: the guard's servlet filter on a real Jetty, its
 * interceptor on a real gRPC server, a keyed guard, and a file store across a restart. The poisoned
 * request is refused and the next legitimate owner (a real lock grant) is admitted; the confirmation
 * is one read for many concurrent requests; with etcd down, a new owner is answered 503 while the
 * current one goes on; a mark poisoned before the bound existed is lowered, never below the
 * revision; and the bound works over TLS as a user with nothing but read on the probed key.
 */
class IssuedBoundEtcdTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final FencingToken POISON = FencingToken.of(Long.MAX_VALUE);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Counts the reads of the bound it wraps. */
    static final class Counting implements IssuedBound {
        final AtomicInteger reads = new AtomicInteger();
        private final IssuedBound inner;

        Counting(IssuedBound inner) {
            this.inner = inner;
        }

        @Override
        public CompletionStage<FencingToken> current() {
            reads.incrementAndGet();
            return inner.current();
        }
    }

    /** Jetty with {@code filter} in front of a servlet that counts its calls and answers the token. */
    static final class Jetty implements AutoCloseable {
        final Server server = new Server();
        final AtomicInteger calls = new AtomicInteger();
        final URI uri;

        Jetty(GuardFilter filter) throws Exception {
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
            context.addServlet(
                    new ServletHolder(new HttpServlet() {
                        @Override
                        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                            calls.incrementAndGet();
                            resp.getWriter().print("token " + req.getAttribute(GuardFilter.TOKEN_ATTRIBUTE));
                        }
                    }),
                    "/*");
            server.setHandler(context);
            server.start();
            uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
        }

        @Override
        public void close() throws Exception {
            server.stop();
        }
    }

    private HttpRequest post(URI uri, FencingToken token) {
        return FencingHttp.inject(HttpRequest.newBuilder(uri).timeout(WAIT), token)
                .POST(HttpRequest.BodyPublishers.ofString("x"))
                .build();
    }

    private HttpResponse<String> send(URI uri, FencingToken token) throws Exception {
        return http.send(post(uri, token), HttpResponse.BodyHandlers.ofString());
    }

    private static Guard.Builder bounded(Client client) {
        return Guard.builder().issuedBound(EtcdIssuedBound.of(client));
    }

    @Test
    void servletOnJettyRefusesThePoisonedTokenWith400AndAdmitsTheNextOwner() throws Exception {
        String name = Etcd.uniquePrefix("bound-http");
        Guard guard = bounded(ETCD.client()).build();
        try (Jetty jetty = new Jetty(new GuardFilter(guard));
                LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Grant a = lock.lock(WAIT);
            assertEquals(200, send(jetty.uri, a.token()).statusCode());

            HttpResponse<String> poisoned = send(jetty.uri, POISON);
            assertEquals(400, poisoned.statusCode(), poisoned.body());
            assertTrue(poisoned.body().contains("fencing token 9223372036854775807 was not issued"), poisoned.body());
            assertEquals(1, jetty.calls.get(), "the poisoned request never reached the servlet");
            assertEquals(Optional.of(a.token()), guard.highWater(), "the mark did not move");

            lock.unlock();
            Grant b = lock.lock(WAIT);
            assertEquals(200, send(jetty.uri, b.token()).statusCode(), "the next legitimate owner");
            assertEquals(409, send(jetty.uri, a.token()).statusCode(), "the previous owner is stale");
            assertEquals(400, send(jetty.uri, POISON).statusCode());
            assertEquals(Optional.of(b.token()), guard.highWater());
            lock.unlock();
        }
    }

    private static final MethodDescriptor.Marshaller<String> TEXT = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<String, String> WRITE = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("disco.test.Bound", "Write"))
            .setRequestMarshaller(TEXT)
            .setResponseMarshaller(TEXT)
            .build();

    @Test
    void grpcServerClosesThePoisonedCallWithInvalidArgumentAndAdmitsTheNextOwner() throws Exception {
        String name = Etcd.uniquePrefix("bound-grpc");
        Guard guard = bounded(ETCD.client()).build();
        AtomicInteger calls = new AtomicInteger();
        io.grpc.Server server = guardedServer(guard, calls);
        ManagedChannel channel = channelTo(server);
        try (LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Grant a = lock.lock(WAIT);
            assertEquals("under " + a.token(), call(channel, a.token()));
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(channel, POISON));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
            assertTrue(
                    e.getStatus().getDescription().contains("was not issued"),
                    e.getStatus().getDescription());
            assertEquals(1, calls.get());
            lock.unlock();
            Grant b = lock.lock(WAIT);
            assertEquals("under " + b.token(), call(channel, b.token()));
            assertEquals(
                    Status.Code.ABORTED,
                    assertThrows(StatusRuntimeException.class, () -> call(channel, a.token()))
                            .getStatus()
                            .getCode());
            assertEquals(Optional.of(b.token()), guard.highWater());
            lock.unlock();
        } finally {
            channel.shutdownNow().awaitTermination(10, SECONDS);
            server.shutdownNow().awaitTermination(10, SECONDS);
        }
    }

    @Test
    void grpcServerWhoseBoundPointsAtADeadPortClosesANewTokenWithUnavailableAndKeepsTheCurrentOwner() throws Exception {
        int dead;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            dead = s.getLocalPort(); // closed again: nothing listens there
        }
        try (Client nowhere = Client.builder()
                .endpoints("http://127.0.0.1:" + dead)
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(1)))
                .build()) {
            Guard guard = Guard.builder()
                    .issuedBound(EtcdIssuedBound.of(nowhere))
                    .boundTimeout(Duration.ofSeconds(1))
                    .initialToken(FencingToken.of(7))
                    .build();
            io.grpc.Server server = guardedServer(guard, new AtomicInteger());
            ManagedChannel channel = channelTo(server);
            try {
                assertEquals("under 7", call(channel, FencingToken.of(7)), "the current owner (the mark) passes");
                long start = System.nanoTime();
                StatusRuntimeException e =
                        assertThrows(StatusRuntimeException.class, () -> call(channel, FencingToken.of(8)));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
                assertTrue(ms < 5000, "refused in about the bound timeout: " + ms + " ms");
                assertEquals(
                        Status.Code.UNAVAILABLE,
                        assertThrows(StatusRuntimeException.class, () -> call(channel, POISON))
                                .getStatus()
                                .getCode(),
                        "never admitted unconfirmed");
                assertEquals("under 7", call(channel, FencingToken.of(7)));
                assertEquals(Optional.of(FencingToken.of(7)), guard.highWater());
            } finally {
                channel.shutdownNow().awaitTermination(10, SECONDS);
                server.shutdownNow().awaitTermination(10, SECONDS);
            }
        }
    }

    /**
     * @return a started gRPC server of the one method {@link #WRITE} behind a {@link GuardServerInterceptor} of
     *     {@code guard}: it answers {@code under <token>}, counting its calls in {@code calls}
     */
    private static io.grpc.Server guardedServer(Guard guard, AtomicInteger calls) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("disco.test.Bound")
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    calls.incrementAndGet();
                    response.onNext(
                            "under " + GuardServerInterceptor.currentToken().orElseThrow());
                    response.onCompleted();
                }))
                .build();
        return NettyServerBuilder.forAddress(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
                .addService(ServerInterceptors.intercept(service, new GuardServerInterceptor(guard)))
                .build()
                .start();
    }

    private static ManagedChannel channelTo(io.grpc.Server server) {
        return Grpc.newChannelBuilderForAddress("127.0.0.1", server.getPort(), InsecureChannelCredentials.create())
                .build();
    }

    private static String call(ManagedChannel channel, FencingToken token) {
        return ClientCalls.blockingUnaryCall(
                io.grpc.ClientInterceptors.intercept(channel, FencingGrpc.clientInterceptor(token)),
                WRITE,
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, SECONDS),
                "w");
    }

    @Test
    void aKeyedGuardRefusesThePoisonPerKeyAndSharesOneBoundAcrossKeys() throws Exception {
        String base = Etcd.uniquePrefix("bound-keyed");
        Counting bound = new Counting(EtcdIssuedBound.of(ETCD.client()));
        KeyedGuard keyed = Guard.builder().issuedBound(bound).buildKeyed();
        try (LockService la = EtcdProvider.newLock(ETCD.client(), base + "/a");
                LockService lb = EtcdProvider.newLock(ETCD.client(), base + "/b")) {
            Grant a = la.lock(WAIT);
            Grant b = lb.lock(WAIT); // issued after a: a's read confirms both only if it came later
            keyed.forKey("b").check(b.token());
            int reads = bound.reads.get();
            keyed.forKey("a").check(a.token());
            assertEquals(reads, bound.reads.get(), "a token below b's, confirmed for key b, costs key a no read");
            assertThrows(TokenNotIssuedException.class, () -> keyed.forKey("a").check(POISON));
            assertEquals(Optional.of(a.token()), keyed.forKey("a").highWater());
            la.unlock();
            Grant next = la.lock(WAIT);
            keyed.forKey("a").admit(next.token()).close();
            assertThrows(TokenStaleException.class, () -> keyed.forKey("a").check(a.token()));
            keyed.forKey("b").check(b.token()); // key b's owner was never disturbed
            la.unlock();
            lb.unlock();
        }
    }

    @Test
    void theFileStoreNeverHoldsThePoisonAndANewGuardOnItAdmitsTheNextOwner() throws Exception {
        String name = Etcd.uniquePrefix("bound-store");
        Path file = dir.resolve("marks");
        try (LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Grant a = lock.lock(WAIT);
            Guard first = bounded(ETCD.client()).store(GuardStore.file(file)).build();
            first.admit(a.token()).close();
            assertThrows(TokenNotIssuedException.class, () -> first.admit(POISON));
            assertEquals(Map.of("", a.token()), GuardStore.file(file).load(), "the store holds the owner's token");

            Guard restarted =
                    bounded(ETCD.client()).store(GuardStore.file(file)).build();
            assertThrows(TokenNotIssuedException.class, () -> restarted.check(POISON));
            lock.unlock();
            Grant b = lock.lock(WAIT);
            restarted.admit(b.token()).close();
            assertThrows(TokenStaleException.class, () -> restarted.check(a.token()));
            lock.unlock();
        }
    }

    @Test
    void aMarkPoisonedBeforeTheBoundIsLoweredToTheRevisionAndNeverBelow() throws Exception {
        String name = Etcd.uniquePrefix("bound-recovery");
        Path file = dir.resolve("marks");
        Guard unbounded = Guard.builder().store(GuardStore.file(file)).build(); // as before this existed
        unbounded.check(POISON);
        try (LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Guard restarted =
                    bounded(ETCD.client()).store(GuardStore.file(file)).build();
            Grant a = lock.lock(WAIT);
            assertThrows(TokenStaleException.class, () -> restarted.check(a.token()), "locked out by the poison");
            ETCD.client()
                    .getKVClient()
                    .put(Etcd.bytes(name + "-elsewhere"), Etcd.bytes("x"))
                    .get(10, SECONDS); // etcd moves on

            long revision = EtcdProvider.currentRevision(ETCD.client(), WAIT).value();
            IllegalArgumentException below = assertThrows(
                    IllegalArgumentException.class, () -> restarted.lowerMark(FencingToken.of(revision - 1)));
            assertTrue(
                    below.getMessage().contains("below the coordination service's current revision"),
                    below.getMessage());
            assertEquals(Optional.of(POISON), restarted.highWater(), "refused: nothing changed");

            FencingToken lowered = restarted.lowerMarkToBound().orElseThrow();
            assertTrue(lowered.value() >= revision && lowered.value() < Long.MAX_VALUE, lowered.toString());
            assertEquals(Map.of("", lowered), GuardStore.file(file).load());
            assertThrows(
                    TokenStaleException.class,
                    () -> restarted.check(a.token()),
                    "a grant from before the recovery is rejected, like after seeding with the revision");
            assertThrows(TokenNotIssuedException.class, () -> restarted.check(POISON));
            lock.unlock();
            Grant b = lock.lock(WAIT);
            restarted.admit(b.token()).close();

            Guard again = bounded(ETCD.client()).store(GuardStore.file(file)).build();
            assertEquals(Optional.of(b.token()), again.highWater(), "the lowered mark survives a restart");
            lock.unlock();
        }
    }

    @Test
    void aHundredConcurrentRequestsWithOneNewTokenMakeOneRead() throws Exception {
        String name = Etcd.uniquePrefix("bound-coalesced");
        Counting bound = new Counting(EtcdIssuedBound.of(ETCD.client()));
        Guard guard = Guard.builder().issuedBound(bound).build();
        try (Jetty jetty = new Jetty(new GuardFilter(guard));
                LockService lock = EtcdProvider.newLock(ETCD.client(), name)) {
            Grant a = lock.lock(WAIT);
            List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                answers.add(http.sendAsync(post(jetty.uri, a.token()), HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> f : answers) {
                assertEquals(200, f.get(30, SECONDS).statusCode());
            }
            assertEquals(1, bound.reads.get(), "one read of etcd for 100 requests");
            assertEquals(100, jetty.calls.get());
            lock.unlock();
        }
    }

    @Test
    void withEtcdDownANewOwnerIsAnswered503WhileTheCurrentOwnerGoesOn() throws Exception {
        String name = Etcd.uniquePrefix("bound-down");
        try (EtcdCluster etcd = EtcdCluster.start(1);
                Client client = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(1)))
                        .build()) {
            Guard guard = Guard.builder()
                    .issuedBound(EtcdIssuedBound.of(client))
                    .boundTimeout(Duration.ofSeconds(1))
                    .build();
            try (Jetty jetty = new Jetty(new GuardFilter(guard))) {
                FencingToken current;
                FencingToken next;
                try (LockService lock = EtcdProvider.newLock(client, name);
                        LockService other = EtcdProvider.newLock(client, name + "-other")) {
                    current = lock.lock(WAIT).token();
                    assertEquals(200, send(jetty.uri, current).statusCode());
                    next = other.lock(WAIT).token(); // issued, not yet seen by the guard
                    assertTrue(next.isNewerThan(current));
                    etcd.stopMember(0);
                }
                long start = System.nanoTime();
                HttpResponse<String> refused = send(jetty.uri, next);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(503, refused.statusCode(), refused.body());
                assertEquals(Optional.of("1"), refused.headers().firstValue("Retry-After"));
                assertTrue(refused.body().contains("not admitted"), refused.body());
                assertTrue(ms < 5000, "refused in about the bound timeout, not a hang: " + ms + " ms");
                assertEquals(200, send(jetty.uri, current).statusCode(), "the current owner still passes");
                assertEquals(Optional.of(current), guard.highWater());
                assertEquals(
                        503, send(jetty.uri, POISON).statusCode(), "the poison is not admitted unconfirmed either");

                etcd.startMember(0);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> send(jetty.uri, next).statusCode() == 200);
                assertEquals(Optional.of(next), guard.highWater());
            }
        }
    }

    @Test
    void overTlsAsAUserWhoMayReadOnlyTheProbedKey() throws Exception {
        EtcdTls tls = EtcdTls.generate(false, "client");
        try (EtcdCluster etcd = EtcdCluster.start(1, tls)) {
            etcd.etcdctl("role", "add", "guard");
            etcd.etcdctl("role", "grant-permission", "guard", "read", EtcdIssuedBound.DEFAULT_KEY);
            etcd.etcdctl("user", "add", "guard:guard-pw");
            etcd.etcdctl("user", "grant-role", "guard", "guard");
            etcd.etcdctl("user", "add", "nobody:nobody-pw");
            etcd.enableAuth("root-pw");
            try (Client guardUser = tlsClient(etcd, tls, "guard", "guard-pw");
                    Client nobody = tlsClient(etcd, tls, "nobody", "nobody-pw");
                    Client root = tlsClient(etcd, tls, "root", "root-pw")) {
                root.getKVClient()
                        .put(ByteSequence.from("/some/write", UTF_8), ByteSequence.from("x", UTF_8))
                        .get(10, SECONDS);
                long revision = root.getKVClient()
                        .get(ByteSequence.from("/", UTF_8))
                        .get(10, SECONDS)
                        .getHeader()
                        .getRevision();

                Guard guard = Guard.builder()
                        .issuedBound(EtcdIssuedBound.of(guardUser))
                        .build();
                guard.check(FencingToken.of(revision));
                assertThrows(TokenNotIssuedException.class, () -> guard.check(POISON));
                assertTrue(guard.confirmedBound().orElseThrow().value() >= revision);

                Guard denied =
                        Guard.builder().issuedBound(EtcdIssuedBound.of(nobody)).build();
                BoundUnavailableException e =
                        assertThrows(BoundUnavailableException.class, () -> denied.check(FencingToken.of(revision)));
                assertTrue(String.valueOf(e.getMessage()).contains("permission denied"), e.getMessage());
                assertInstanceOf(Throwable.class, e.getCause());
                assertTrue(denied.highWater().isEmpty(), "never admitted unconfirmed");
            }
        }
    }

    private static Client tlsClient(EtcdCluster etcd, EtcdTls tls, String user, String password) throws Exception {
        return Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .sslContext(b -> b.trustManager(tls.caFile().toFile()))
                .user(ByteSequence.from(user, UTF_8))
                .password(ByteSequence.from(password, UTF_8))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
    }
}

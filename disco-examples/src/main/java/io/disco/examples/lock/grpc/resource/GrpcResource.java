package io.disco.examples.lock.grpc.resource;

import io.disco.examples.Cli;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.examples.lock.grpc.pb.ResourceGrpc;
import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardServerInterceptor;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.etcd.jetcd.Client;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code lock/grpc/resource}: the {@link ResourceGrpc} service on a grpc-netty-shaded server,
 * protected by {@link GuardServerInterceptor}. A call without a well-formed {@code x-fencing-token},
 * or with a token etcd never issued (above its current revision: {@link EtcdIssuedBound}), is closed
 * with {@code INVALID_ARGUMENT}, a stale token with {@code ABORTED}, a new owner's token that etcd
 * could not confirm in time with {@code UNAVAILABLE}; the handler reads the
 * accepted token from {@link GuardServerInterceptor#currentToken()}. Listens on loopback only and
 * logs every call with its token and status.
 *
 * <p>Run: {@code java ... io.disco.examples.lock.grpc.resource.GrpcResource [--port 9090] [--endpoints host:port]}
 */
public final class GrpcResource implements AutoCloseable {

    /** The scenario's name in its log and self-check verdict. */
    public static final String SCENARIO = "lock/grpc/resource";
    /** The port when none is given. */
    public static final int DEFAULT_PORT = 9090;

    private final Server server;
    private final Guard guard;

    private GrpcResource(Server server, Guard guard) {
        this.server = server;
        this.guard = guard;
    }

    /**
     * Runs the resource until the process is stopped.
     *
     * @param args {@code [--port N]}
     * @throws Exception if the server cannot start
     */
    public static void main(String[] args) throws Exception {
        Cli cli = Cli.parse(args, DEFAULT_PORT);
        Client client = Cli.etcdClient(cli.endpoints()); // for the life of the process
        GrpcResource resource = start(cli.port(), client);
        new Say(SCENARIO)
                .step(
                        "listening on 127.0.0.1:%d: %s/Write (guarded by %s metadata)",
                        resource.port(), ResourceGrpc.SERVICE, FencingGrpc.KEY.name());
        Runtime.getRuntime().addShutdownHook(new Thread(resource::close, "grpc-resource-stop"));
        resource.server.awaitTermination();
    }

    /**
     * Starts the resource on loopback, its guard confirming new owners' tokens with etcd.
     *
     * @param port the port, 0 for any free port
     * @param client a client of the etcd cluster that issues the tokens; the caller closes it after
     *     the resource
     * @return the running resource; close it to stop it
     * @throws IOException if the server cannot bind
     */
    public static GrpcResource start(int port, Client client) throws IOException {
        return start(port, EtcdIssuedBound.of(client));
    }

    /**
     * Starts the resource on loopback, its guard confirming new owners' tokens with {@code bound}.
     *
     * @param port the port, 0 for any free port
     * @param bound how far the backend that issues the tokens has issued them (etcd's, ZooKeeper's)
     * @return the running resource; close it to stop it
     * @throws IOException if the server cannot bind
     */
    public static GrpcResource start(int port, IssuedBound bound) throws IOException {
        Say say = new Say(SCENARIO);
        Guard guard = Guard.builder().issuedBound(bound).build();
        AtomicReference<String> data = new AtomicReference<>("");
        ResourceGrpc.Handler handler = request -> {
            // The interceptor's admission lasts until this unary call is closed: no write with a higher
            // token starts before this one has been applied, so no check is needed here.
            FencingToken token = GuardServerInterceptor.currentToken().orElseThrow();
            data.set(request.data());
            return new ResourceGrpc.WriteReply(
                    token.value(), "accepted '" + request.data() + "' from " + request.owner());
        };
        Server server = NettyServerBuilder.forAddress(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
                        InsecureServerCredentials.create())
                // The last interceptor runs first: the log sees the guard's verdict.
                .addService(ServerInterceptors.intercept(
                        ResourceGrpc.bindService(handler), new GuardServerInterceptor(guard), new LogInterceptor(say)))
                .build()
                .start();
        return new GrpcResource(server, guard);
    }

    /** @return the port the server listens on */
    public int port() {
        return server.getPort();
    }

    /** @return the guard of the service */
    public Guard guard() {
        return guard;
    }

    /** Stops the server, waiting a little for calls in flight. */
    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Checks the guard of a running resource: calls without the token metadata, with malformed values
     * or with a token nobody issued ({@code 2^63-1}) must be closed with {@code INVALID_ARGUMENT}.
     *
     * @param port the resource's port on loopback
     * @return the verdict
     */
    public static Verdict selfCheck(int port) {
        Say say = new Say(SCENARIO);
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(
                        InetAddress.getLoopbackAddress().getHostAddress(), port, InsecureChannelCredentials.create())
                .build();
        List<String> wrong = new ArrayList<>();
        try {
            for (String value :
                    new String[] {null, "abc", "-1", "0", "1.5", "99999999999999999999", Long.toString(Long.MAX_VALUE)
                    }) {
                Channel ch = value == null ? channel : ClientInterceptors.intercept(channel, rawToken(value));
                Status.Code code;
                try {
                    ResourceGrpc.write(
                            ch, new ResourceGrpc.WriteRequest("careless", "malformed"), Duration.ofSeconds(5));
                    code = Status.Code.OK;
                } catch (StatusRuntimeException e) {
                    code = e.getStatus().getCode();
                }
                say.step("Write with %s=%s -> %s", FencingGrpc.KEY.name(), value == null ? "(absent)" : value, code);
                if (code != Status.Code.INVALID_ARGUMENT) {
                    wrong.add((value == null ? "absent" : value) + " answered " + code);
                }
            }
        } finally {
            channel.shutdownNow();
        }
        return wrong.isEmpty()
                ? new Verdict(SCENARIO, true, "missing, malformed and never-issued tokens closed with INVALID_ARGUMENT")
                : new Verdict(SCENARIO, false, "guard let malformed or never-issued tokens through: " + wrong);
    }

    /** Sends {@code value} as the token metadata, unparsed. */
    private static ClientInterceptor rawToken(String value) {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
                    MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        headers.put(FencingGrpc.KEY, value);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /** Logs every call with its token metadata and final status. */
    private static final class LogInterceptor implements ServerInterceptor {
        private final Say say;

        LogInterceptor(Say say) {
            this.say = say;
        }

        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            Iterable<String> tokens = headers.getAll(FencingGrpc.KEY);
            String token = tokens == null ? "(absent)" : String.join(",", tokens);
            return next.startCall(
                    new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                        @Override
                        public void close(Status status, Metadata trailers) {
                            say.step(
                                    "%s %s=%s -> %s%s",
                                    call.getMethodDescriptor().getFullMethodName(),
                                    FencingGrpc.KEY.name(),
                                    token,
                                    status.getCode(),
                                    status.getDescription() == null ? "" : " (" + status.getDescription() + ")");
                            super.close(status, trailers);
                        }
                    },
                    headers);
        }
    }
}

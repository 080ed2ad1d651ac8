package io.disco.examples.lock.grpc.client;

import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.Say;
import io.disco.examples.lock.LockZombie;
import io.disco.examples.lock.grpc.pb.ResourceGrpc;
import io.disco.examples.lock.grpc.resource.GrpcResource;
import io.disco.fencing.FencingGrpc;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * {@code lock/grpc/client}: the zombie scenario over gRPC against a running {@link GrpcResource}.
 * Each owner attaches its token with {@link FencingGrpc#clientInterceptor}; the zombie's call is
 * closed with {@code ABORTED} by the resource's guard.
 *
 * <p>Run (after the resource): {@code java ... io.disco.examples.lock.grpc.client.GrpcClientExample
 * [--endpoints host:port] [--port 9090]}, where the port is the resource's.
 */
public final class GrpcClientExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "lock/grpc";
    /** The lock's etcd prefix. */
    public static final String LOCK_NAME = "/disco/examples/lock/grpc";

    private GrpcClientExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]] [--port N]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, GrpcResource.DEFAULT_PORT);
        System.exit(run(cli.endpoints(), "127.0.0.1", cli.port(), LOCK_NAME, LockZombie.DEFAULT_ZOMBIE_TTL)
                .verdict()
                .print());
    }

    /**
     * Runs the scenario against the resource at {@code host:port}.
     *
     * @param endpoints etcd client URLs
     * @param host the resource's host
     * @param port the resource's port
     * @param lockName the lock's etcd prefix
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static LockZombie.Outcome run(
            List<String> endpoints, String host, int port, String lockName, Duration zombieTtl) {
        return run(host, port, (say, writer) -> LockZombie.run(say, endpoints, lockName, zombieTtl, writer));
    }

    /**
     * Runs the scenario against the resource at {@code host:port}, on {@code backend}.
     *
     * @param backend where the owners are opened
     * @param host the resource's host
     * @param port the resource's port
     * @param lockName the lock's name
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static LockZombie.Outcome run(
            DemoBackend backend, String host, int port, String lockName, Duration zombieTtl) {
        return run(host, port, (say, writer) -> LockZombie.run(say, backend, lockName, zombieTtl, writer));
    }

    private static LockZombie.Outcome run(
            String host, int port, BiFunction<Say, LockZombie.Writer, LockZombie.Outcome> story) {
        Say say = new Say(SCENARIO);
        say.step("resource: %s:%d", host, port);
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(host, port, InsecureChannelCredentials.create())
                .build();
        try {
            return story.apply(say, (owner, token, data) -> {
                try {
                    ResourceGrpc.WriteReply reply = ResourceGrpc.write(
                            ClientInterceptors.intercept(channel, FencingGrpc.clientInterceptor(token)),
                            new ResourceGrpc.WriteRequest(owner, data),
                            Duration.ofSeconds(5));
                    return new LockZombie.Answer(true, "OK", reply.message() + " under token " + reply.token());
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() == Status.Code.ABORTED) {
                        return new LockZombie.Answer(
                                false, "ABORTED", e.getStatus().getDescription());
                    }
                    throw e;
                }
            });
        } finally {
            channel.shutdown();
            try {
                channel.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

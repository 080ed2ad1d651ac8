package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.provider.zookeeper.ZooKeeperEndpoints;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import io.disco.provider.zookeeper.ZooKeeperSession;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * One connected Curator client and the timeout of every call, for {@code --backend zookeeper}: connecting waits at
 * most {@code --command-timeout}, and so does each answer after it (each call runs on a thread of the tool's own and
 * is waited for at most that long; ZooKeeper's own request timeout is set to it too), so an unreachable, frozen or
 * foreign server ends the command with {@link ExitCode#UNREACHABLE} and a message naming the connect string and, per
 * server, why ({@link ZooKeeperEndpoints}), never a hang.
 *
 * <p>The client is ZooKeeper's default (plaintext, no authentication), with Curator's ensemble tracker off: it
 * talks to the servers named and to no others, as an operator behind a tunnel or a proxy means it to. Its ZooKeeper
 * session holds no node, so a killed tool leaves nothing behind; it ends with the command.
 */
final class ZooKeeper implements Cluster {

    /** The connect string without {@code --connect}: zkCli.sh's. */
    static final String DEFAULT_CONNECT = "127.0.0.1:2181";

    /**
     * The session timeout the tool asks for (the server keeps it within its bounds): long enough for a watch to
     * outlive a short outage on the same session. The session holds no node.
     */
    private static final int SESSION_MS = 30_000;

    private final CuratorFramework client;
    private final String connect;
    private final Duration timeout;
    private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "disco-cli-zookeeper-call");
        t.setDaemon(true);
        return t;
    });

    private ZooKeeper(CuratorFramework client, String connect, Duration timeout) {
        this.client = client;
        this.connect = connect;
        this.timeout = timeout;
    }

    /**
     * Connects to {@code connect} (a connect string {@link Connection#checkConnect} accepted), waiting at most
     * {@code timeout}.
     *
     * @throws CliFailure {@link ExitCode#UNREACHABLE} when no server completed a connection in time, saying per server
     *     why
     */
    static ZooKeeper connect(String connect, Duration timeout) {
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, Integer.toString(ms));
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .ensembleTracker(false)
                .sessionTimeoutMs(SESSION_MS)
                .connectionTimeoutMs(ms)
                .waitForShutdownTimeoutMs(ms)
                .zkClientConfig(config)
                .retryPolicy(new RetryUntilElapsed(ms, 100))
                .build();
        ZooKeeper zk = new ZooKeeper(c, connect, timeout);
        boolean connected;
        try {
            c.start();
            connected = c.blockUntilConnected(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            zk.close();
            throw new CliFailure(ExitCode.FAILED, "interrupted while connecting to ZooKeeper at " + connect, e);
        } catch (RuntimeException e) {
            zk.close();
            throw new CliFailure(
                    ExitCode.USAGE, "--connect: ZooKeeper's client refuses '" + connect + "': " + e.getMessage(), e);
        }
        if (!connected) {
            CliFailure f = zk.unreachable("connection", null);
            zk.close();
            throw f;
        }
        return zk;
    }

    CuratorFramework client() {
        return client;
    }

    Duration timeout() {
        return timeout;
    }

    /** A blocking ZooKeeper call, as {@link #await} runs it. */
    interface Call<T> {
        T call() throws Exception;
    }

    /**
     * Runs one blocking call on a thread of its own and waits for it at most the command timeout: no answer in time,
     * or a lost connection, is {@link ExitCode#UNREACHABLE}; an error ZooKeeper answered is {@link ExitCode#FAILED};
     * a {@link CliFailure} the call throws is passed on.
     */
    <T> T await(Call<T> call, String what) {
        Callable<T> task = call::call;
        Future<T> f = calls.submit(task);
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw unreachable(what, e);
        } catch (ExecutionException e) {
            throw failure(what, e.getCause());
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCode.FAILED, "interrupted while waiting for the " + what, e);
        }
    }

    /** What a failed call means: the connection's loss (exit 4), or ZooKeeper's answer (exit 1). */
    CliFailure failure(String what, Throwable cause) {
        if (cause instanceof CliFailure f) {
            return f;
        }
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof KeeperException k) {
                switch (k.code()) {
                    case CONNECTIONLOSS, SESSIONEXPIRED, OPERATIONTIMEOUT, REQUESTTIMEOUT, SESSIONMOVED:
                        return unreachable(what, cause);
                    case NOAUTH:
                        return new CliFailure(
                                ExitCode.FAILED,
                                "ZooKeeper at " + connect + " refused the " + what + ": " + k.getMessage()
                                        + " (an ACL denies this client, which has no credentials)",
                                cause);
                    default:
                        return new CliFailure(
                                ExitCode.FAILED,
                                "ZooKeeper at " + connect + " failed the " + what + ": " + k.getMessage(),
                                cause);
                }
            }
        }
        String m = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        return new CliFailure(ExitCode.FAILED, "ZooKeeper at " + connect + " failed the " + what + ": " + m, cause);
    }

    /** No answer in time: names the connect string and, per server, why (refused, unknown host, ...). */
    CliFailure unreachable(String what, Throwable cause) {
        String why = ZooKeeperEndpoints.diagnose(
                connect, Duration.ofMillis(Math.min(1000, Math.max(200, timeout.toMillis() / 2))));
        return new CliFailure(
                ExitCode.UNREACHABLE,
                "no answer from ZooKeeper at " + connect + " within " + Etcd.millis(timeout) + " to the " + what + ": "
                        + why + " (--command-timeout waits longer)",
                cause);
    }

    @Override
    public String backend() {
        return "ZooKeeper";
    }

    /** {@link ZkLayout#detect}: from the nodes present. */
    @Override
    public Optional<Primitive> detect(String name) {
        return ZkLayout.detect(this, name);
    }

    @Override
    public String nothingHolds(String name) {
        return ZkLayout.nothingHolds(name);
    }

    /** Who holds and waits for {@code name}: the provider's own listing, without a session. */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return await(
                () -> {
                    try {
                        return ZooKeeperSession.claimants(client, primitive, name);
                    } catch (IllegalArgumentException e) {
                        throw new CliFailure(
                                ExitCode.USAGE, "'" + name + "' is not a ZooKeeper path (" + e.getMessage() + ")", e);
                    } catch (DiscoException e) {
                        throw failure("listing of the claimants of " + name, e);
                    }
                },
                "listing of the claimants of " + name);
    }

    /** {@link ZooKeeperNodes#isClaimOf}: on ZooKeeper a name's listing holds its own claims only. */
    @Override
    public boolean isClaimOf(Primitive primitive, String name, String key) {
        return ZooKeeperNodes.isClaimOf(primitive, name, key);
    }

    @Override
    public String nameOf(Primitive primitive, String name, String key) {
        return name;
    }

    /**
     * {@code ?}: ZooKeeper keeps a session's timeout and when it last heard from it on the server, and tells neither
     * to another client; a node is there as long as its session lives.
     */
    @Override
    public String ttlLeft(long leaseId) {
        return "?";
    }

    /** Closes the client (its session ends: it held no node), waiting at most the command timeout. */
    @Override
    public void close() {
        try {
            client.close();
        } finally {
            calls.shutdownNow();
        }
    }
}

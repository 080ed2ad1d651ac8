package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper behind the client with the test hooks ({@code Disco.over(ZooKeeperDiscoBackend.over(builder, options))}),
 * for tests, demos and fault runs; an application's client runs on its own {@code CuratorFramework} instead
 * ({@link ZooKeeperProvider}). Here an owner is a ZooKeeper session of its own, and a ZooKeeper session is a client:
 * every {@link #open()} builds a new {@code CuratorFramework} from the caller's builder, starts it and opens a
 * {@link ZooKeeperSession} on it (the same owner as the application's client's); the owner closes that client when
 * it is closed, so that owners can be frozen and ended one by one. The caller's builder is only read.
 *
 * <p>The test hooks ({@link TestableBackend}), for tests, demos and fault runs:
 * <ul>
 *   <li>owners of another time to live ({@link #withTtl}, {@link #open(Duration)}) need a backend made with
 *       {@link #over(Function, Duration, ZooKeeperOptions)}, which builds a builder per time to live;</li>
 *   <li>{@link #freeze} points the owner's ZooKeeper client at a loopback port that refuses every connection
 *       ({@code ZooKeeper.updateServerList}): its connection drops, it cannot reconnect, no ping reaches the servers,
 *       which expire its session after its timeout, as a stopped process's; the owner, hearing nothing, declares
 *       itself lost by its own deadline. Curator's ensemble tracker could point the client back at the ensemble, so
 *       only owners built with {@code ensembleTracker(false)} can be frozen;</li>
 *   <li>{@link #endOwner} and {@link #endOwnerOf} end a session on the server as its expiry would: a second handle
 *       attaches to it with its id and password and closes it (the server deletes its ephemeral nodes at once).
 *       Only the sessions of owners this backend opened can be ended (their password is needed);</li>
 *   <li>{@link #keys}, {@link #deleteKey}, {@link #ownerOf} and {@link #endOwnerOf} read and write through an admin
 *       client this backend builds from its builder on first use, and {@link #close()} closes it.</li>
 * </ul>
 */
public final class ZooKeeperDiscoBackend implements TestableBackend {

    private final CuratorFrameworkFactory.Builder builder;
    /** The builder of another time to live's owners; null for a backend over one builder. */
    private final Function<Duration, CuratorFrameworkFactory.Builder> builders;

    private final ZooKeeperOptions options;
    /** What this backend and its {@link #withTtl} backends share: their owners, the admin client. */
    private final BackendHooks hooks;
    /** Whether this backend made {@link #hooks} (and so closes them), rather than {@link #withTtl}. */
    private final boolean root;

    private ZooKeeperDiscoBackend(
            CuratorFrameworkFactory.Builder builder,
            Function<Duration, CuratorFrameworkFactory.Builder> builders,
            ZooKeeperOptions options,
            BackendHooks hooks,
            boolean root) {
        this.builder = builder;
        this.builders = builders;
        this.options = options;
        this.hooks = hooks;
        this.root = root;
    }

    /**
     * @param builder how to build each owner's client: the connect string, the session timeout (the owners' time
     *                to live), the retry policy
     * @param options the sessions' options
     * @return the backend; its owners all have the builder's session timeout ({@link #withTtl} refuses another)
     * @throws NullPointerException if an argument is null
     */
    public static ZooKeeperDiscoBackend over(CuratorFrameworkFactory.Builder builder, ZooKeeperOptions options) {
        return new ZooKeeperDiscoBackend(
                Objects.requireNonNull(builder, "builder"),
                null,
                Objects.requireNonNull(options, "options"),
                new BackendHooks(),
                true);
    }

    /**
     * A backend whose owners' clients are built by {@code builders}: given a time to live, a new builder whose
     * session timeout is that time to live (the connect string, the connection timeout, the retry policy as the
     * caller likes). It is called once for {@code ttl} and once per other time to live {@link #withTtl} is given;
     * each builder is only read afterwards.
     *
     * @param builders a new builder of owners' clients per time to live
     * @param ttl      the time to live of the owners {@link #open()} opens
     * @param options  the sessions' options
     * @return the backend
     * @throws NullPointerException if an argument is null, or {@code builders} returns null
     * @throws IllegalArgumentException if {@code ttl} is not a positive number of milliseconds that fits an int
     */
    public static ZooKeeperDiscoBackend over(
            Function<Duration, CuratorFrameworkFactory.Builder> builders, Duration ttl, ZooKeeperOptions options) {
        Objects.requireNonNull(builders, "builders");
        return new ZooKeeperDiscoBackend(
                build(builders, ttl), builders, Objects.requireNonNull(options, "options"), new BackendHooks(), true);
    }

    private static CuratorFrameworkFactory.Builder build(
            Function<Duration, CuratorFrameworkFactory.Builder> builders, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero() || ttl.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("ttl must be a positive session timeout in milliseconds, got " + ttl);
        }
        return Objects.requireNonNull(builders.apply(ttl), "the builder for " + ttl);
    }

    /**
     * Builds and starts a client, and opens a session on it, waiting at most the options' connect timeout.
     *
     * @return the owner
     * @throws DiscoException if ZooKeeper could not be reached in time (the message names the connect string)
     */
    @Override
    public Owner open() {
        return openOwner();
    }

    private SessionOwner openOwner() {
        CuratorFramework client = builder.build();
        client.start();
        try {
            SessionOwner owner = new SessionOwner(
                    client,
                    ZooKeeperSession.open(client, options),
                    connectString(),
                    builder.withEnsembleTracker(),
                    hooks.owners);
            hooks.owners.add(owner);
            return owner;
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * Starts a leadership runner on the election {@code name} (see {@link LeadershipRunner}): each attempt
     * {@linkplain #open() opens} a client and a session of its own and campaigns with a
     * {@linkplain ZooKeeperSession#newElection(String) ZooKeeper election} on it; closing the attempt's election
     * (the runner does, when the term or the session ends) closes that session and client.
     *
     * @param name the election's ZooKeeper name, absolute
     * @param options the value, task, listener, requeue and backoff
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     */
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options) {
        String checked = ZooKeeperNodes.checkName(name);
        Objects.requireNonNull(options, "options");
        return LeadershipRunner.start(
                checked,
                () -> {
                    SessionOwner owner = openOwner();
                    try {
                        return owner.session().newElection(checked, owner::close);
                    } catch (RuntimeException e) {
                        owner.close();
                        throw e;
                    }
                },
                options);
    }

    /** {@link #newLeadershipRunner(String, LeadershipRunner.Options)} on the backend {@link #withTtl withTtl(ttl)}. */
    @Override
    public LeadershipRunner newLeadershipRunner(String path, LeadershipRunner.Options options, Duration ttl) {
        return withTtl(ttl).newLeadershipRunner(path, options);
    }

    @Override
    public String describe() {
        return "ZooKeeper at " + connectString();
    }

    private String connectString() {
        return builder.getEnsembleProvider().getConnectionString();
    }

    /** The options' owner wait; by default the session timeout the builder asks for (the owners' time to live). */
    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElse(Duration.ofMillis(builder.getSessionTimeoutMs()));
    }

    /**
     * This backend with owners whose session timeout is {@code ttl}, their clients built by the builder the
     * {@linkplain #over(Function, Duration, ZooKeeperOptions) builders} give for it; it shares this backend's owners
     * (for {@link #endOwnerOf}) and admin client.
     *
     * @throws UnsupportedOperationException if this backend was made {@linkplain #over(CuratorFrameworkFactory.Builder,
     *     ZooKeeperOptions) over one builder} and {@code ttl} is not its session timeout
     */
    @Override
    public ZooKeeperDiscoBackend withTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.toMillis() == builder.getSessionTimeoutMs()) {
            return this;
        }
        if (builders == null) {
            throw new UnsupportedOperationException("a ZooKeeperDiscoBackend over one builder has its session timeout ("
                    + builder.getSessionTimeoutMs() + " ms): make it over builders per time to live for " + ttl);
        }
        return new ZooKeeperDiscoBackend(build(builders, ttl), builders, options, hooks, false);
    }

    /**
     * Points the owner's ZooKeeper client at a loopback port that refuses every connection (see the class
     * description): the servers hear no more from its session and expire it after its timeout.
     *
     * @throws IllegalStateException if the owner's client was built with Curator's ensemble tracker
     */
    @Override
    public void freeze(Owner owner) {
        SessionOwner o = own(owner);
        if (o.tracked()) {
            throw new IllegalStateException("session 0x" + o.id() + " cannot be frozen: its client was built with"
                    + " Curator's ensemble tracker, which can point it back at the ensemble; build the owners' clients"
                    + " with ensembleTracker(false)");
        }
        String nowhere = hooks.nowhere();
        zk("freeze session 0x" + o.id(), () -> {
            o.handle().updateServerList(nowhere);
            return null;
        });
    }

    /**
     * Ends the owner's session on the server (see the class description), then tells the owner's own handle that
     * its session expired, as the server would on its next contact.
     */
    @Override
    public void endOwner(Owner owner) {
        SessionOwner o = own(owner);
        zk("end session 0x" + o.id(), () -> {
            ZooKeeper handle = o.handle();
            BackendHooks.endSession(handle, o.connectString());
            handle.getTestable().injectSessionExpiration();
            return null;
        });
    }

    /** Ends, on the server, the session that owns the ephemeral node {@code key}, telling its client nothing. */
    @Override
    public void endOwnerOf(String key) {
        long id = Long.parseUnsignedLong(
                ownerOf(key).orElseThrow(() -> new IllegalStateException(key + " is absent or belongs to no session")),
                16);
        SessionOwner o = hooks.owners.stream()
                .filter(x -> x.session().sessionId() == id)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("session 0x" + Long.toHexString(id) + " of " + key
                        + " is not one of this backend's owners: ending it needs its password"));
        zk("end session 0x" + o.id(), () -> {
            ZooKeeper handle = o.handle();
            if (handle.getSessionId() != id) {
                throw new IllegalStateException("session 0x" + Long.toHexString(id) + " has already ended");
            }
            BackendHooks.endSession(handle, o.connectString());
            return null;
        });
    }

    /**
     * The ephemeral nodes under {@code name}, at any depth, as full paths: the owners' queue nodes. The directories
     * (Curator's container parents, which the server deletes only on its container sweep) are nobody's and are not
     * listed.
     */
    @Override
    public List<String> keys(String name) {
        return zk("list the nodes under " + name, () -> {
            CuratorFramework admin = hooks.admin(builder);
            admin.sync().forPath(name);
            List<String> keys = new ArrayList<>();
            BackendHooks.collectEphemerals(admin, name, keys);
            Collections.sort(keys);
            return keys;
        });
    }

    @Override
    public void deleteKey(String key) {
        zk("delete " + key, () -> hooks.admin(builder).delete().forPath(key));
    }

    /** The session id, in hex, of the ephemeral node {@code key}; empty when it is absent or persistent. */
    @Override
    public Optional<String> ownerOf(String key) {
        Stat s = zk("read " + key, () -> hooks.admin(builder).checkExists().forPath(key));
        return s == null || s.getEphemeralOwner() == 0
                ? Optional.empty()
                : Optional.of(Long.toHexString(s.getEphemeralOwner()));
    }

    /** Curator's and ZooKeeper's threads, and the sessions' and their workers' ({@code disco-zk-*}). */
    @Override
    public boolean isBackendThread(Thread thread) {
        String name = thread.getName();
        return name.startsWith("disco-zk-")
                || name.contains("-EventThread")
                || name.contains("-SendThread")
                || name.startsWith("Curator-");
    }

    /**
     * Closes the admin client the hooks built, and the port frozen owners point at; on a {@link #withTtl} backend,
     * nothing (the backend it came from closes them). Never an owner.
     */
    @Override
    public void close() {
        if (root) {
            hooks.close();
        }
    }

    private SessionOwner own(Owner owner) {
        Objects.requireNonNull(owner, "owner");
        if (!(owner instanceof SessionOwner o) || o.owners() != hooks.owners) {
            throw new IllegalArgumentException(owner + " is not an owner of this ZooKeeper backend");
        }
        return o;
    }

    private interface ZkCall<T> {
        T call() throws Exception;
    }

    /** Runs a hook's request, failing with a {@link DiscoException} that says what. */
    private <T> T zk(String what, ZkCall<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while waiting for " + describe() + " to " + what, e);
        } catch (Exception e) {
            throw new DiscoException(describe() + " failed to " + what + ": " + e, e);
        }
    }
}

package io.disco.testservers;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A real etcd cluster for tests, benchmarks and the demo.
 *
 * <p>{@link #start(int)} finds etcd in this order and never skips:
 * <ol>
 *   <li>{@value #ENV_ENDPOINTS} (comma-separated client URLs, e.g. {@code http://127.0.0.1:2379}): an
 *       <em>external</em> cluster that is used as is. It has as many members as endpoints, does not
 *       support faults, and {@link #close()} leaves it running.</li>
 *   <li>{@value #ENV_BINARY}, or else {@code etcd} on {@code PATH}: <em>local</em> member processes on
 *       free loopback ports, with data dirs under {@code /dev/shm} when it is writable (else
 *       {@code java.io.tmpdir}), {@code --unsafe-no-fsync} and {@code --heartbeat-interval=10
 *       --election-timeout=100} (so the minimum lease TTL is 1 s). Only local clusters support
 *       faults ({@link #kill}, {@link #stopMember}, {@link #startMember}, {@link #restart}, {@link #pause},
 *       {@link #resume}).</li>
 *   <li>Testcontainers, when it is on the class path and a Docker engine answers: a
 *       <em>container</em> with a single member (whatever {@code members} says) and no faults.</li>
 *   <li>Otherwise {@link IllegalStateException} with instructions for installing etcd.</li>
 * </ol>
 *
 * <p>Every wait is bounded: a start, restart or health check that does not succeed in time fails
 * with the tail of the member's log in the message and cleans up what it started. Instances are
 * thread-safe. {@link #close()} is idempotent; a JVM shutdown hook closes a local cluster that a
 * test forgot to close (it cannot help if the JVM itself is killed with SIGKILL).
 */
public final class EtcdCluster implements AutoCloseable {

    /** Environment variable naming the client URLs of an existing cluster, comma-separated. */
    public static final String ENV_ENDPOINTS = "DISCO_ETCD_ENDPOINTS";
    /** Environment variable naming the etcd binary to start. */
    public static final String ENV_BINARY = "DISCO_ETCD_BINARY";

    private final String description;
    private final List<String> endpoints;
    /** Set for a local cluster: its member processes. */
    private final LocalCluster local;
    /** Set for a container cluster. */
    private final AutoCloseable container;

    private final Thread shutdownHook;
    private boolean closed;

    private EtcdCluster(String description, List<String> endpoints, LocalCluster local, AutoCloseable container) {
        this.description = description;
        this.endpoints = List.copyOf(endpoints);
        this.local = local;
        this.container = container;
        this.shutdownHook = new Thread(this::close, "disco-etcd-shutdown");
        if (local != null || container != null) {
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        }
    }

    /** A cluster that runs in a container; called by {@link ContainerEtcd} only. */
    static EtcdCluster container(String description, String endpoint, AutoCloseable container) {
        return new EtcdCluster(description, List.of(endpoint), null, container);
    }

    /** A running cluster this object does not own; called by {@link ClusterResolver} only. */
    static EtcdCluster external(String description, List<String> endpoints) {
        return new EtcdCluster(description, endpoints, null, null);
    }

    /** A local cluster, not started yet ({@link #startLocal()}); called by {@link LocalClusterStarter} only. */
    static EtcdCluster local(String description, LocalCluster local) {
        return new EtcdCluster(description, local.endpoints(), local, null);
    }

    /** Launches the members of a local cluster and waits until they are healthy. */
    synchronized void startLocal() {
        local.startAll();
    }

    /**
     * Starts (or connects to) an etcd cluster as described in the {@linkplain EtcdCluster class
     * documentation}, reading the process environment, and returns once every member reports
     * healthy.
     *
     * @param members the number of members for a local cluster, at least 1
     * @return the running cluster; close it when done
     * @throws IllegalArgumentException if {@code members < 1}
     * @throws IllegalStateException if no etcd is available (the message says how to install it),
     *                               or the cluster does not become healthy within 30 s (the message
     *                               holds the tail of the failing member's log)
     */
    public static EtcdCluster start(int members) {
        return start(members, System.getenv());
    }

    /**
     * Starts a local cluster whose members serve clients over TLS with {@code tls}'s certificates (and
     * require client certificates when {@link EtcdTls#clientCertAuth()}); endpoints are {@code https://}
     * URLs. Needs a local etcd binary: {@value #ENV_ENDPOINTS} and containers are not used.
     *
     * @param members the number of members, at least 1
     * @param tls the certificates
     * @return the running cluster; close it when done
     * @throws IllegalStateException if no etcd binary is found (the message says how to install it)
     */
    public static EtcdCluster start(int members, EtcdTls tls) {
        return start(members, java.util.Objects.requireNonNull(tls, "tls"), new String[0]);
    }

    /**
     * Starts a local cluster whose members get {@code extraFlags} as well (for example
     * {@code --auth-token-ttl=2}), with TLS when {@code tls} is not null. Needs a local etcd binary.
     *
     * @param members the number of members, at least 1
     * @param tls the certificates, or null for plain HTTP
     * @param extraFlags more etcd flags, each {@code --name=value}
     * @return the running cluster; close it when done
     * @throws IllegalStateException if no etcd binary is found (the message says how to install it)
     */
    public static EtcdCluster start(int members, EtcdTls tls, String... extraFlags) {
        if (members < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least 1 member, got " + members);
        }
        Path binary = EtcdBinary.find(System.getenv());
        if (binary == null) {
            throw new IllegalStateException("No etcd binary found for a TLS cluster. " + EtcdBinary.INSTALL_HINT);
        }
        return LocalClusterStarter.start(binary, members, tls, List.of(extraFlags));
    }

    /**
     * Starts a local cluster whose members each run in a network namespace of their own
     * ({@link MemberNetwork}): member {@code i} listens on {@code network().address(i)}, ports 2379
     * (clients) and 2380 (peers), so its traffic to and from the other members can be cut with
     * {@link MemberNetwork#cut}; each member's peer port is behind a proxy ({@link #peerLinks()}), so
     * its peer links can also be slowed or made lossy. The cluster owns the network and the proxies:
     * {@link #close()} removes them after the members exit. Needs a local etcd binary, root, iproute2 and nftables.
     *
     * @param members the number of members, at least 1
     * @return the running cluster; close it when done
     * @throws IllegalStateException if no etcd binary is found, or namespaces cannot be made here (the
     *     message says what is missing: root, {@code ip}, {@code nft})
     */
    public static EtcdCluster startNetworked(int members) {
        if (members < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least 1 member, got " + members);
        }
        Path binary = EtcdBinary.find(System.getenv());
        if (binary == null) {
            throw new IllegalStateException("No etcd binary found for a networked cluster. " + EtcdBinary.INSTALL_HINT);
        }
        return LocalClusterStarter.startNetworked(binary, members);
    }

    /**
     * Starts a local cluster shaped like a production one, for benchmarks: members on loopback ports
     * whose data dirs are under {@code dataRoot} (a disk, not tmpfs, for figures that include the
     * disk's sync) with fsync on (no {@code --unsafe-no-fsync}), etcd's default heartbeat (100 ms) and
     * election timeout (1 s), and each member's peer port behind a proxy ({@link #peerLinks()}) whose
     * links can be slowed ({@link PeerLinks#degradeAll}) for a data-centre round trip. Needs a local
     * etcd binary.
     *
     * @param members the number of members, at least 1
     * @param dataRoot the directory to make the data dirs in (created if missing)
     * @return the running cluster; close it when done (which deletes the data)
     * @throws IllegalStateException if no etcd binary is found or the cluster does not start
     */
    public static EtcdCluster startOnDisk(int members, Path dataRoot) {
        if (members < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least 1 member, got " + members);
        }
        Objects.requireNonNull(dataRoot, "dataRoot");
        Path binary = EtcdBinary.find(System.getenv());
        if (binary == null) {
            throw new IllegalStateException("No etcd binary found for an on-disk cluster. " + EtcdBinary.INSTALL_HINT);
        }
        return LocalClusterStarter.startOnDisk(binary, members, dataRoot);
    }

    /**
     * @return the proxies in front of the members' peer ports, for a cluster started with
     *     {@link #startNetworked(int)} or {@link #startOnDisk}, else empty
     */
    public Optional<PeerLinks> peerLinks() {
        return local == null ? Optional.empty() : Optional.ofNullable(local.peerLinks);
    }

    /** @return the network of a cluster started with {@link #startNetworked(int)}, else empty */
    public Optional<MemberNetwork> network() {
        return local == null ? Optional.empty() : Optional.ofNullable(local.network);
    }

    /** {@link #start(int)} with the given environment instead of the process environment. */
    static EtcdCluster start(int members, Map<String, String> env) {
        if (members < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least 1 member, got " + members);
        }
        return ClusterResolver.resolve(members, env);
    }

    /** @return the certificates of a TLS cluster, if it is one */
    public java.util.Optional<EtcdTls> tls() {
        return java.util.Optional.ofNullable(local == null ? null : local.tls);
    }

    /**
     * Returns the client URLs of all members, in member order ({@code http://127.0.0.1:port} for a
     * local cluster).
     *
     * @return an immutable list with one URL per member
     */
    public List<String> endpoints() {
        return endpoints;
    }

    /**
     * Returns the client URL of one member.
     *
     * @param member the member index, {@code 0 .. size() - 1}
     * @return the member's client URL
     * @throws IndexOutOfBoundsException if there is no such member
     */
    public String endpoint(int member) {
        return endpoints.get(Objects.checkIndex(member, endpoints.size()));
    }

    /**
     * Returns the number of members.
     *
     * @return the number of members (endpoints)
     */
    public int size() {
        return endpoints.size();
    }

    /**
     * Tells whether this cluster runs local member processes, which is what the fault operations
     * need.
     *
     * @return {@code true} for a local cluster; {@code false} for an external or container cluster,
     *         whose fault operations throw {@link UnsupportedOperationException}
     */
    public boolean supportsFaults() {
        return local != null;
    }

    /**
     * Crashes a member: SIGKILL (which also ends a paused member), then waits for it to exit. Does
     * nothing if the member is not running. The data dir and ports are kept for {@link #startMember(int)}.
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException if the cluster is closed or the process does not exit within 10 s
     */
    public synchronized void kill(int member) {
        member(member).kill();
    }

    /**
     * Shuts a member down gracefully: SIGTERM (after SIGCONT if it is paused), waits up to 10 s for it
     * to exit and falls back to SIGKILL. Does nothing if the member is not running. The data dir and
     * ports are kept for {@link #startMember(int)}.
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException if the cluster is closed or the process does not exit
     */
    public synchronized void stopMember(int member) {
        member(member).stop();
    }

    /**
     * Starts a stopped or killed member again on the same ports with the same data dir (so it keeps
     * its data and identity; {@code --initial-cluster-state existing}), and waits until it reports
     * healthy. A member of a multi-member cluster is only healthy while a quorum of members runs.
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException if the cluster is closed, the member is already running, or it
     *                               does not become healthy within 30 s (the message holds its log
     *                               tail; the process is killed)
     */
    public synchronized void startMember(int member) {
        LocalMember m = member(member);
        if (m.isRunning()) {
            throw new IllegalStateException("etcd member " + member + " is already running");
        }
        local.startAgain(m);
    }

    /**
     * Kills a member if it is running ({@link #kill(int)}) and starts it again ({@link #startMember(int)}).
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException as for {@link #kill(int)} and {@link #startMember(int)}
     */
    public synchronized void restart(int member) {
        kill(member);
        startMember(member);
    }

    /**
     * Freezes a member with SIGSTOP: its process keeps its sockets open but answers nothing, like a
     * long GC pause or a hung host, until {@link #resume(int)}.
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException if the cluster is closed, the member is not running, or the signal
     *                               cannot be sent
     */
    public synchronized void pause(int member) {
        member(member).pause();
    }

    /**
     * Lets a paused member continue with SIGCONT. Harmless on a member that is not paused.
     *
     * @param member the member index
     * @throws UnsupportedOperationException if the cluster is not local
     * @throws IllegalStateException if the cluster is closed, the member is not running, or the signal
     *                               cannot be sent
     */
    public synchronized void resume(int member) {
        member(member).resume();
    }

    private LocalMember member(int member) {
        if (local == null) {
            throw new UnsupportedOperationException(
                    "fault injection (kill/stopMember/startMember/restart/pause/resume) needs local"
                            + " etcd members started by EtcdCluster, but this is the " + description + ". Unset "
                            + ENV_ENDPOINTS + " and install etcd: " + EtcdBinary.INSTALL_HINT);
        }
        if (closed) {
            throw new IllegalStateException("the etcd cluster is closed");
        }
        return local.member(member);
    }

    /** Process ids of the local members (-1 for one never started), for tests of this module. */
    synchronized List<Long> pids() {
        return local == null ? List.of() : local.pids();
    }

    /** The directory holding the data dirs and logs of a local cluster, for tests of this module. */
    Path workDir() {
        return local == null ? null : local.workDir;
    }

    /**
     * Runs {@code etcdctl} (the v3 CLI, Debian's {@code etcd-client}) against the first member, with
     * this cluster's TLS flags when it has TLS, and returns its output.
     *
     * @param args the command, for example {@code "--user=root:pw", "role", "add", "app"}
     * @return what etcdctl printed
     * @throws IllegalStateException if etcdctl is missing (the message says how to install it), fails,
     *     or takes longer than 30 s
     */
    public String etcdctl(String... args) {
        return Etcdctl.run(
                local == null ? null : local.binary, endpoints.get(0), local == null ? null : local.tls, args);
    }

    /**
     * Turns etcd authentication on: creates the {@code root} role and user (with {@code rootPassword})
     * and enables authentication. Add roles and users first or afterwards with
     * {@link #etcdctl etcdctl("--user=root:" + rootPassword, ...)}.
     *
     * @param rootPassword the root user's password
     */
    public void enableAuth(String rootPassword) {
        etcdctl("role", "add", "root");
        etcdctl("user", "add", "root:" + rootPassword);
        etcdctl("user", "grant-role", "root", "root");
        etcdctl("auth", "enable");
    }

    /**
     * Describes the cluster: local (etcd version, binary and member count), external (its
     * endpoints) or container (its image).
     *
     * @return a one-line description
     */
    public String describe() {
        return description;
    }

    /**
     * Returns {@link #describe()} followed by the endpoints.
     *
     * @return a one-line description
     */
    @Override
    public String toString() {
        return description + " at " + endpoints;
    }

    /**
     * Stops the cluster, if this object started it: kills every local member process (paused ones
     * too), waits for them to exit and deletes their data dirs and logs, or stops the container. An
     * external cluster is left alone. Idempotent and thread-safe.
     *
     * @throws IllegalStateException if a process does not exit or a file cannot be deleted; cleanup
     *                               of everything else is still attempted
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (local != null || container != null) {
            LocalResources.dropShutdownHook(shutdownHook);
        }
        IllegalStateException failure = new IllegalStateException("closing " + this + " failed");
        if (local != null) {
            local.close(failure);
        }
        if (container != null) {
            try {
                container.close();
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }
}

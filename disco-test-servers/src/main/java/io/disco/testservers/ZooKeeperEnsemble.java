package io.disco.testservers;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A ZooKeeper ensemble of member processes on loopback (or each in a network namespace of its own,
 * {@link #startNetworked}), for fault tests: each member is
 * {@code org.apache.zookeeper.server.quorum.QuorumPeerMain} in a JVM of its own (the {@code java} of the current
 * process, the ZooKeeper server jar and its dependencies taken from the current class path, so nothing needs to
 * be installed), and can be killed ({@link #kill}), frozen with SIGSTOP ({@link #freeze}) and thawed
 * ({@link #thaw}), or started again as the same server with its data ({@link #restart}).
 *
 * <pre>{@code
 * try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(3)) {
 *     CuratorFrameworkFactory.newClient(zk.connectString(), ...);
 *     zk.kill(zk.leader());
 * }
 * }</pre>
 *
 * <p>Members tick every {@value #TICK_MS} ms (sessions from {@code 2 * tick} to 60 s; a follower gives up a
 * silent leader after 20 ticks), do not fsync (a throwaway ensemble), and keep their data and logs in a scratch
 * directory ({@code /dev/shm} where it is writable). {@link #close()} kills every member and removes that
 * directory, also when starting failed; a shutdown hook does the same for an ensemble nobody closed. Every wait
 * is bounded and fails with what each member said. Thread-safe: the methods are serialised.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {

    /** The members' tick: the granularity of session expiry and of the quorum's timeouts. */
    public static final int TICK_MS = 100;
    /** How long starting (or starting again) may take before it fails. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path workDir;
    private final List<ZooKeeperMember> members;
    /** The network namespaces the members run in, or null for loopback. */
    private final MemberNetwork network;
    /** The proxies in front of the members' quorum and election ports in the {@link #network}, or null. */
    private final PeerLinks peerLinks;

    private final Path java;
    private final String classPath;
    private final Thread shutdownHook;
    private boolean closed;

    ZooKeeperEnsemble(
            Path workDir,
            List<ZooKeeperMember> members,
            Path java,
            String classPath,
            MemberNetwork network,
            PeerLinks peerLinks) {
        this.workDir = workDir;
        this.network = network;
        this.peerLinks = peerLinks;
        this.members = List.copyOf(members);
        this.java = java;
        this.classPath = classPath;
        this.shutdownHook = new Thread(this::close, "disco-zookeeper-ensemble-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts three members and waits until they serve with one leader.
     *
     * @return the running ensemble
     * @throws IllegalStateException if it did not start within {@link #START_TIMEOUT} (its members' log tails in
     *     the message); nothing is left behind
     */
    public static ZooKeeperEnsemble start() {
        return start(3);
    }

    /**
     * Starts {@code members} members and waits until they serve with one leader.
     *
     * @param members how many, at least 1
     * @return the running ensemble
     * @throws IllegalArgumentException if {@code members} is below 1
     * @throws IllegalStateException if it did not start within {@link #START_TIMEOUT}, or the ZooKeeper server is
     *     not on the class path; nothing is left behind
     */
    public static ZooKeeperEnsemble start(int members) {
        return ZooKeeperEnsembleStarter.start(members);
    }

    /**
     * Starts {@code members} members, each in a network namespace of its own ({@link MemberNetwork}), and waits
     * until they serve with one leader: member {@code i} listens on {@code network().get().address(i)}, ports 2181
     * (clients), 2888 (quorum) and 3888 (election), so its traffic to and from the other members can be cut with
     * {@link MemberNetwork#cut} (a member cut off from the quorum stops serving its clients). The members reach
     * each other's quorum and election ports through proxies ({@link #peerLinks()}) on their
     * {@linkplain MemberNetwork#peerAddress peer addresses}, so those links can also be slowed or made lossy. The
     * ensemble owns the network and the proxies: {@link #close()} removes them after the members exit. Needs
     * root, iproute2 and nftables
     * ({@link MemberNetwork#unavailableReason()}).
     *
     * @param members how many, 1 to 100
     * @return the running ensemble
     * @throws IllegalArgumentException if {@code members} is out of range
     * @throws IllegalStateException if namespaces cannot be made here, it did not start within
     *     {@link #START_TIMEOUT}, or the ZooKeeper server is not on the class path; nothing is left behind
     */
    public static ZooKeeperEnsemble startNetworked(int members) {
        return ZooKeeperEnsembleStarter.startNetworked(members);
    }

    /** @return the network of an ensemble started with {@link #startNetworked(int)}, else empty */
    public Optional<MemberNetwork> network() {
        return Optional.ofNullable(network);
    }

    /**
     * @return the proxies in front of the members' quorum and election ports, for an ensemble started with
     *     {@link #startNetworked(int)}, else empty
     */
    public Optional<PeerLinks> peerLinks() {
        return Optional.ofNullable(peerLinks);
    }

    /** @return the number of members */
    public int size() {
        return members.size();
    }

    /**
     * @return every member's {@code <host>:<port>} ({@code 127.0.0.1}, or its address in the {@link #network()}),
     *     comma-separated, in member order
     */
    public String connectString() {
        return members.stream().map(ZooKeeperMember::connectString).collect(Collectors.joining(","));
    }

    /**
     * @param member the member's index, from 0
     * @return that member's {@code <host>:<port>} alone
     * @throws IndexOutOfBoundsException if there is no such member
     */
    public String connectString(int member) {
        return member(member).connectString();
    }

    /**
     * Kills a member with SIGKILL (a frozen one too) and waits for its process to exit.
     *
     * @param member the member's index, from 0
     */
    public synchronized void kill(int member) {
        member(member).process.kill();
    }

    /**
     * Freezes a member with SIGSTOP: it keeps its sockets but answers nothing until {@link #thaw}.
     *
     * @param member the member's index, from 0
     * @throws IllegalStateException if it is not running
     */
    public synchronized void freeze(int member) {
        member(member).process.pause();
    }

    /**
     * Thaws a frozen member with SIGCONT.
     *
     * @param member the member's index, from 0
     * @throws IllegalStateException if it is not running
     */
    public synchronized void thaw(int member) {
        member(member).process.resume();
    }

    /**
     * Starts a member again as the same server with its data (killing it first if it runs) and waits until it
     * serves as a leader or follower.
     *
     * @param member the member's index, from 0
     * @throws IllegalStateException if it did not serve within {@link #START_TIMEOUT}; it is killed again then
     */
    public synchronized void restart(int member) {
        ZooKeeperMember m = member(member);
        m.process.kill();
        launch(m);
        try {
            ZooKeeperQuorum.awaitServing(members, List.of(m), false, START_TIMEOUT);
        } catch (RuntimeException e) {
            m.process.kill();
            throw e;
        }
    }

    /**
     * Waits until exactly one member says it leads (bounded by {@link #START_TIMEOUT}).
     *
     * @return the leader's index, from 0
     * @throws IllegalStateException if none did in time, with what each member said
     */
    public synchronized int leader() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            List<String> modes = modes();
            List<Integer> leaders = IntStream.range(0, modes.size())
                    .filter(i -> modes.get(i).equals("leader"))
                    .boxed()
                    .toList();
            if (leaders.size() == 1) {
                return leaders.get(0);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no single ZooKeeper leader within " + START_TIMEOUT.toSeconds()
                        + " s; the members said " + modes);
            }
            ZooKeeperQuorum.pause();
        }
    }

    /**
     * @return what each member says it is, in member order: {@code leader}, {@code follower}, or why it is
     *     neither ({@code down}, {@code frozen}, {@code not serving}, {@code no answer})
     */
    public synchronized List<String> modes() {
        return members.stream().map(ZooKeeperMember::mode).toList();
    }

    /**
     * Waits until every member serves (as a leader or follower) and exactly one leads.
     *
     * @param timeout how long at most
     * @throws IllegalStateException if they did not within {@code timeout}, with what each member said
     */
    public synchronized void awaitHealthy(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        ZooKeeperQuorum.awaitServing(members, members, true, timeout);
    }

    /**
     * Kills every member, deletes the data dirs and logs and removes the {@link #network()}; idempotent.
     *
     * @throws IllegalStateException if a member or a file could not be removed (the rest are removed still)
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LocalResources.dropShutdownHook(shutdownHook);
        IllegalStateException failure =
                new IllegalStateException("the ZooKeeper ensemble in " + workDir + " was not removed completely");
        for (ZooKeeperMember m : members) {
            LocalResources.closeStep(m.process::kill, failure);
        }
        LocalResources.deleteTree(workDir, failure);
        LocalResources.closeNetwork(peerLinks, network, failure);
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper ensemble of " + members.size() + " member process(es) at " + connectString() + " (" + workDir
                + ")" + (network == null ? "" : ", each in its own network namespace, peer ports behind proxies");
    }

    private ZooKeeperMember member(int member) {
        return members.get(Objects.checkIndex(member, members.size()));
    }

    /** Launches every member and waits until they serve with one leader. */
    synchronized void startAll() {
        for (ZooKeeperMember m : members) {
            launch(m);
        }
        ZooKeeperQuorum.awaitServing(members, members, true, START_TIMEOUT);
    }

    private void launch(ZooKeeperMember m) {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper ensemble is closed");
        }
        List<String> servers = members.stream().map(ZooKeeperMember::serverLine).toList();
        try {
            m.launch(java, classPath, TICK_MS, servers);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start ZooKeeper member zk" + m.id + " with " + java + ": " + e.getMessage(), e);
        }
    }
}

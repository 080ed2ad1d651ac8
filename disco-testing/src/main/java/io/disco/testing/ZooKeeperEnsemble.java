package io.disco.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A ZooKeeper ensemble of member processes on loopback, for fault tests: each member is
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

    private static final int PORT_ATTEMPTS = 3;
    /** The class path entries a server needs, by the start of their file names. */
    private static final List<String> SERVER_JARS = List.of("zookeeper", "audience-annotations", "netty-", "slf4j-",
            "logback-", "commons-io", "commons-cli", "metrics-core", "snappy-java", "jline", "spotbugs-annotations");

    private final Path workDir;
    private final List<ZooKeeperMember> members;
    private final Path java;
    private final String classPath;
    private final Thread shutdownHook;
    private boolean closed;

    private ZooKeeperEnsemble(Path workDir, List<ZooKeeperMember> members, Path java, String classPath) {
        this.workDir = workDir;
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
        if (members < 1) {
            throw new IllegalArgumentException("members must be at least 1, got " + members);
        }
        String classPath = serverClassPath();
        Path java = currentJava();
        for (int attempt = 1; ; attempt++) {
            int[] ports = LocalResources.freePorts(3 * members, "ZooKeeper");
            Path workDir = LocalResources.scratchDir("disco-zookeeper-", "ZooKeeper");
            List<ZooKeeperMember> list = new ArrayList<>();
            for (int i = 0; i < members; i++) {
                list.add(new ZooKeeperMember(i + 1, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2], workDir));
            }
            ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(workDir, list, java, classPath);
            try {
                ensemble.startAll();
                return ensemble;
            } catch (RuntimeException e) {
                boolean portTaken = list.stream().anyMatch(m -> m.process.logTail().contains("Address already in use"));
                try {
                    ensemble.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                    throw e;
                }
                if (!portTaken || attempt == PORT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** @return the number of members */
    public int size() {
        return members.size();
    }

    /** @return every member's {@code 127.0.0.1:<port>}, comma-separated, in member order */
    public String connectString() {
        return members.stream().map(ZooKeeperMember::connectString).collect(Collectors.joining(","));
    }

    /**
     * @param member the member's index, from 0
     * @return that member's {@code 127.0.0.1:<port>} alone
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
            awaitServing(List.of(m), false, START_TIMEOUT);
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
            List<Integer> leaders = IntStream.range(0, modes.size()).filter(i -> modes.get(i).equals("leader")).boxed().toList();
            if (leaders.size() == 1) {
                return leaders.get(0);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no single ZooKeeper leader within " + START_TIMEOUT.toSeconds()
                        + " s; the members said " + modes);
            }
            pause();
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
        awaitServing(members, true, timeout);
    }

    /**
     * Kills every member and deletes the data dirs and logs; idempotent.
     *
     * @throws IllegalStateException if a member or a file could not be removed (the rest are removed still)
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (Thread.currentThread() != shutdownHook) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is exiting: the hook runs this again, which returns at once
            }
        }
        IllegalStateException failure = new IllegalStateException("the ZooKeeper ensemble in " + workDir
                + " was not removed completely");
        for (ZooKeeperMember m : members) {
            try {
                m.process.kill();
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
        LocalResources.deleteTree(workDir, failure);
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper ensemble of " + members.size() + " member process(es) at " + connectString() + " (" + workDir + ")";
    }

    private ZooKeeperMember member(int member) {
        return members.get(Objects.checkIndex(member, members.size()));
    }

    private synchronized void startAll() {
        for (ZooKeeperMember m : members) {
            launch(m);
        }
        awaitServing(members, true, START_TIMEOUT);
    }

    private void launch(ZooKeeperMember m) {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper ensemble is closed");
        }
        List<String> servers = members.stream().map(ZooKeeperMember::serverLine).toList();
        try {
            m.launch(java, classPath, TICK_MS, servers);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start ZooKeeper member zk" + m.id + " with " + java + ": " + e.getMessage(), e);
        }
    }

    /** Polls {@code waitFor}'s modes until they serve (and, with {@code oneLeader}, the ensemble has one leader). */
    private void awaitServing(List<ZooKeeperMember> waitFor, boolean oneLeader, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> modes = modes();
            boolean serving = waitFor.stream().allMatch(m -> Set.of("leader", "follower").contains(modes.get(m.id - 1)));
            if (serving && (!oneLeader || modes.stream().filter("leader"::equals).count() == 1)) {
                return;
            }
            for (ZooKeeperMember m : waitFor) {
                if (!m.process.isRunning()) {
                    throw new IllegalStateException("ZooKeeper member zk" + m.id + " exited while starting; the members said "
                            + modes + "; its log tail:\n" + m.process.logTail());
                }
            }
            if (System.nanoTime() - deadline > 0) {
                ZooKeeperMember first = waitFor.stream().filter(m -> !modes.get(m.id - 1).equals("leader")
                        && !modes.get(m.id - 1).equals("follower")).findFirst().orElse(waitFor.get(0));
                throw new IllegalStateException("the ZooKeeper ensemble did not serve with one leader within "
                        + timeout.toMillis() + " ms; the members said " + modes + "; the log tail of zk" + first.id + ":\n"
                        + first.process.logTail());
            }
            pause();
        }
    }

    /** Between two polls of the members' modes: 50 ms. */
    private void pause() {
        try {
            Thread.sleep(50); // polling processes that offer no event to wait for
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the ZooKeeper ensemble", e);
        }
    }

    private static Path currentJava() {
        return ProcessHandle.current().info().command().map(Paths::get)
                .orElseGet(() -> Paths.get(System.getProperty("java.home"), "bin", "java"));
    }

    /** The ZooKeeper server jar and its dependencies, from the current class path. */
    private static String serverClassPath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String file = Paths.get(entry).getFileName() == null ? "" : Paths.get(entry).getFileName().toString();
            if (file.endsWith(".jar") && SERVER_JARS.stream().anyMatch(file::startsWith)) {
                entries.add(entry);
            }
        }
        if (entries.stream().noneMatch(e -> Paths.get(e).getFileName().toString().matches("zookeeper-\\d.*\\.jar"))) {
            throw new IllegalStateException("the ZooKeeper server jar (org.apache.zookeeper:zookeeper) is not on the class"
                    + " path: add it (curator-test brings it) to start a ZooKeeperEnsemble");
        }
        return String.join(File.pathSeparator, entries);
    }
}

package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A network that can be cut: one Linux network namespace per etcd member, each with its own address
 * {@code 10.77.S.(10 + i)/24} on a veth pair whose other end is a port of a bridge in the root
 * namespace (address {@code 10.77.S.1}), so members reach each other through the bridge and processes
 * of the root namespace (tests, proxies) reach every member. Inside each namespace an nftables table
 * {@code inet disco} has an input chain; {@link #cut} adds rules that drop packets from given source
 * addresses there, {@link #heal} flushes them. (The kernel's {@code netem} is not needed: delay and
 * loss come from a user-space proxy.) The bridge also holds a second address per member,
 * {@link #peerAddress(int) 10.77.S.(110 + i)}, where {@link PeerLinks} proxies the member's peer port and
 * from which it forwards the member's own peer connections; a cut drops both of a member's addresses.
 *
 * <p>Needs root, iproute2 ({@code ip}) and nftables ({@code nft}); {@link #unavailableReason()} says
 * what is missing, and {@link #create(int)} fails with that message. Names carry the creating JVM's
 * pid ({@code dn<pid><letter>m<i>}, bridge {@code dn<pid><letter>br}): {@link #close()} removes
 * everything, a JVM shutdown hook closes a network that was not closed, and each {@link #create}
 * first sweeps namespaces and bridges that a JVM which no longer runs left behind (one killed with
 * SIGKILL). Creations are serialised across JVMs (a file lock, {@link #CREATION_LOCK}), so two
 * networks made at once never pick the same subnet. Instances are thread-safe.
 */
public final class MemberNetwork implements AutoCloseable {

    private static final Pattern OURS = Pattern.compile("^dn(\\d+)[a-z](?:m\\d+|br)$");
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final long COMMAND_TIMEOUT_SECONDS = 10;
    /**
     * Held (a {@link FileLock}) while a network picks its free subnet and builds itself: two JVMs that create
     * networks at once would otherwise both see the same subnet free.
     */
    static final Path CREATION_LOCK = (Files.isDirectory(Path.of("/run/lock"))
                    ? Path.of("/run/lock")
                    : Path.of(System.getProperty("java.io.tmpdir")))
            .resolve("disco-member-network.lock");

    private final String prefix;
    private final int subnet;
    private final int size;
    private final Set<String> namespaces = new HashSet<>();
    private boolean bridge;
    private boolean closed;
    private final Thread shutdownHook = new Thread(this::close, "disco-netns-shutdown");

    private MemberNetwork(int size) {
        this.prefix = "dn" + ProcessHandle.current().pid() + (char) ('a' + SEQUENCE.getAndIncrement() % 26);
        this.size = size;
        this.subnet = freeSubnet();
    }

    /**
     * Tells why member networks cannot be made on this machine.
     *
     * @return empty when namespaces can be made (root, {@code ip} and {@code nft} present), else what is missing
     */
    public static Optional<String> unavailableReason() {
        List<String> missing = new ArrayList<>();
        if (!isRoot()) {
            missing.add("root (network namespaces and nftables rules need it; this runs as "
                    + System.getProperty("user.name") + ")");
        }
        if (!runs("ip", "-V")) {
            missing.add("iproute2's `ip` (Debian: apt-get install iproute2)");
        }
        if (!runs("nft", "--version")) {
            missing.add("nftables' `nft` (Debian: apt-get install nftables; ./test and ./chaos install it as root)");
        }
        return missing.isEmpty() ? Optional.empty() : Optional.of("member networks need " + String.join(", ", missing));
    }

    /**
     * Creates a namespace per member, the bridge and the veth pairs, with an empty nftables input
     * chain in each namespace; sweeps what dead JVMs left first.
     *
     * @param members the number of members, 1 to 100
     * @return the network; close it when done
     * @throws IllegalArgumentException if {@code members} is out of range
     * @throws IllegalStateException if namespaces cannot be made here (the message says why) or a
     *     command fails (what was made is removed)
     */
    public static MemberNetwork create(int members) {
        if (members < 1 || members > 100) {
            throw new IllegalArgumentException("members must be 1 to 100, got " + members);
        }
        unavailableReason().ifPresent(reason -> {
            throw new IllegalStateException(reason);
        });
        synchronized (MemberNetwork.class) { // a FileLock is per JVM: the threads of this one queue here
            try (FileChannel file =
                            FileChannel.open(CREATION_LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock held = file.lock()) {
                sweepLeftovers();
                MemberNetwork n = new MemberNetwork(members);
                Runtime.getRuntime().addShutdownHook(n.shutdownHook);
                return LocalResources.startedOrClosed(n, n::build, n::close);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot lock " + CREATION_LOCK + " to create a member network", e);
            }
        }
    }

    private synchronized void build() {
        String br = prefix + "br";
        run("ip", "link", "add", br, "type", "bridge");
        bridge = true;
        run("ip", "addr", "add", hostAddress() + "/24", "dev", br);
        for (int i = 0; i < size; i++) {
            run("ip", "addr", "add", peerAddress(i) + "/24", "dev", br);
        }
        run("ip", "link", "set", br, "up");
        for (int i = 0; i < size; i++) {
            String ns = namespace(i);
            String host = prefix + "h" + i;
            run("ip", "netns", "add", ns);
            namespaces.add(ns);
            run("ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "link", "set", host, "master", br, "up");
            run("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
            run(
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "nft",
                    "add table inet disco; "
                            + "add chain inet disco input { type filter hook input priority 0; policy accept; }");
        }
    }

    /** @return the number of members */
    public int size() {
        return size;
    }

    /**
     * @param member the member index
     * @return the member's address, {@code 10.77.S.(10 + member)}
     */
    public String address(int member) {
        return "10.77." + subnet + "." + (10 + Objects.checkIndex(member, size));
    }

    /**
     * @param member the member index
     * @return the second address of the member, {@code 10.77.S.(110 + member)}, on the bridge in the root
     *     namespace: where its peer proxy listens and the source of its proxied peer connections
     */
    public String peerAddress(int member) {
        return "10.77." + subnet + "." + (110 + Objects.checkIndex(member, size));
    }

    /** @return the root namespace's address on the bridge, the source of every packet from this host */
    public String hostAddress() {
        return "10.77." + subnet + ".1";
    }

    /**
     * @param member the member index
     * @return the name of the member's namespace
     */
    public String namespace(int member) {
        return prefix + "m" + Objects.checkIndex(member, size);
    }

    /**
     * @param member the member index
     * @return the command prefix that runs a program inside the member's namespace
     *     ({@code ip netns exec <ns>}, which execs the program: its pid is the program's)
     */
    public List<String> launcher(int member) {
        return List.of("ip", "netns", "exec", namespace(member));
    }

    /**
     * Drops, at {@code member}, every packet from the given members (from their addresses and their
     * {@linkplain #peerAddress peer addresses}, through which their peer traffic comes): one direction only (a TCP
     * connection between them still fails both ways, its replies being lost). Cut both ways for a
     * full partition. Idempotent.
     *
     * @param member the receiving member
     * @param from the members whose packets it drops
     * @throws IndexOutOfBoundsException if a member index is out of range (no rule is added)
     * @throws NullPointerException if {@code from} or one of its members is null (no rule is added)
     * @throws IllegalStateException if the network is closed or nft fails
     */
    public synchronized void cut(int member, Collection<Integer> from) {
        requireOpen();
        Objects.checkIndex(member, size);
        Objects.requireNonNull(from, "from")
                .forEach(f -> Objects.checkIndex(Objects.requireNonNull(f, "from member"), size));
        for (int f : from) {
            run(
                    "ip",
                    "netns",
                    "exec",
                    namespace(member),
                    "nft",
                    "add",
                    "rule",
                    "inet",
                    "disco",
                    "input",
                    "ip",
                    "saddr",
                    "{ " + address(f) + ", " + peerAddress(f) + " }",
                    "drop");
        }
    }

    /**
     * Removes every rule at {@code member}: it receives from everybody again.
     *
     * @param member the member index
     * @throws IllegalStateException if the network is closed or nft fails
     */
    public synchronized void heal(int member) {
        requireOpen();
        run("ip", "netns", "exec", namespace(member), "nft", "flush", "chain", "inet", "disco", "input");
    }

    /** Heals every member ({@link #heal(int)}). */
    public synchronized void healAll() {
        for (int i = 0; i < size; i++) {
            heal(i);
        }
    }

    /**
     * @param member the member index
     * @return the rules at the member (nft's listing of its input chain), for messages and tests
     */
    public synchronized String rules(int member) {
        requireOpen();
        return run("ip", "netns", "exec", namespace(member), "nft", "list", "chain", "inet", "disco", "input");
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the member network " + prefix + " is closed");
        }
    }

    /**
     * Removes the namespaces (which removes their veth pairs and rules) and the bridge. Idempotent;
     * the processes still running inside a namespace keep it alive until they exit, so close the
     * members first.
     *
     * @throws IllegalStateException if a removal fails; the others are still attempted
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LocalResources.dropShutdownHook(shutdownHook);
        IllegalStateException failure = new IllegalStateException("removing the member network " + prefix + " failed");
        for (String ns : namespaces) {
            LocalResources.closeStep(() -> run("ip", "netns", "del", ns), failure);
        }
        if (bridge) {
            LocalResources.closeStep(() -> run("ip", "link", "del", prefix + "br"), failure);
        }
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    /**
     * Removes the namespaces and bridges of member networks whose JVM no longer runs.
     *
     * @return how many it removed
     */
    public static int sweepLeftovers() {
        int removed = 0;
        for (String line : run("ip", "netns", "list").split("\n")) {
            String ns = line.trim().split(" ")[0];
            if (leftover(ns)) {
                run("ip", "netns", "del", ns);
                removed++;
            }
        }
        for (String line : run("ip", "-o", "link", "show", "type", "bridge").split("\n")) {
            String[] f = line.split(":\\s*");
            if (f.length > 1 && leftover(f[1].trim())) {
                run("ip", "link", "del", f[1].trim());
                removed++;
            }
        }
        return removed;
    }

    private static boolean leftover(String name) {
        Matcher m = OURS.matcher(name);
        return m.matches()
                && ProcessHandle.of(Long.parseLong(m.group(1)))
                        .map(p -> !p.isAlive())
                        .orElse(true);
    }

    /** The first {@code 10.77.S.0/24} that no interface of this host has an address in. */
    private static int freeSubnet() {
        String addrs = run("ip", "-o", "-4", "addr", "show");
        for (int s = 0; s < 255; s++) {
            if (!addrs.contains(" 10.77." + s + ".")) {
                return s;
            }
        }
        throw new IllegalStateException("no free subnet 10.77.S.0/24 left on this host");
    }

    private static boolean isRoot() {
        try {
            return run("id", "-u").trim().equals("0");
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean runs(String... cmd) {
        try {
            run(cmd);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            if (!p.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", cmd) + " did not finish within " + COMMAND_TIMEOUT_SECONDS + " s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out.trim());
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", cmd), e);
        }
    }
}

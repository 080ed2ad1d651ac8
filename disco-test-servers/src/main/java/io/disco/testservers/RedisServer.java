package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One throwaway {@code redis-server} process for tests: Debian's {@code redis-server} package (7.0 on Debian 12), a
 * free port on {@code 127.0.0.1} (never 6379, where a system instance may run), and a data directory of its own in a
 * temporary folder ({@code /dev/shm} when writable) that {@link #close()} deletes.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *     RedisClient client = RedisClient.create(redis.uri());
 * }
 * }</pre>
 *
 * <p>Every server runs with {@code appendonly yes}, {@code appendfsync always} and {@code save ""} (its data is the
 * append-only file, written before each write is acknowledged, so a key acknowledged before a {@link #kill()} is there
 * after the {@link #restart()}), {@code bind 127.0.0.1}, {@code protected-mode no} and {@code enable-debug-command
 * yes} (so a test can {@code DEBUG SLEEP}), and {@code repl-diskless-sync-delay 0} (a replica syncs at once). {@link #start(Map)} overrides or adds settings, for example {@code
 * appendfsync everysec}. {@link #start(Map, FakeClock)} runs the server on a wall clock the test steps (the server's
 * key expiry follows it; its event loop's timers, on the monotonic clock, do not: see {@link FakeClock}).
 *
 * <p>Fault hooks: {@link #kill()} (SIGKILL; the data stays), {@link #restart()} (the same port, directory and
 * append-only file), {@link #freeze()} (SIGSTOP: connections are accepted by the kernel, but nothing answers) and
 * {@link #resume()} (SIGCONT). Every wait is bounded: a start that does not answer {@code PING} within {@value
 * #START_TIMEOUT_SECONDS} s fails with the tail of the server's log and leaves nothing behind. Instances are
 * thread-safe; {@link #close()} is idempotent, and a JVM shutdown hook closes a server a test forgot (it cannot help
 * if the JVM itself is killed with SIGKILL).
 *
 * <p>Without {@code redis-server} every start fails with an {@link IllegalStateException} that says how to install it;
 * tests never skip. {@link RedisExtension#sharedServer()} shares one server across a test run; {@link
 * RedisSentinelSet} and {@link RedisClusterSet} are made of these servers.
 */
public final class RedisServer implements AutoCloseable {

    /** How long a start (or restart) waits for {@code PING} to be answered, and a replica for its link. */
    public static final int START_TIMEOUT_SECONDS = 10;

    /** How long {@link #command} and {@link #config} wait for a reply. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);

    private static final String HOST = "127.0.0.1";
    /** Ports a system instance may listen on: never picked. */
    private static final List<Integer> RESERVED_PORTS = List.of(6379, 16379, 26379);

    /** Writes a server's configuration: its lines for a port and a data directory. */
    @FunctionalInterface
    interface Config {
        List<String> lines(int port, Path dir);
    }

    private final String kind;
    private final boolean sentinel;
    /** The address it binds to: {@code 127.0.0.1}, or its address in a {@link MemberNetwork}. */
    private final String host;
    /** The command prefix it runs with: none, or {@link MemberNetwork#launcher} to run in a namespace. */
    private final List<String> launcher;

    private final int port;
    private final Path workDir;
    private final Path configFile;
    /** Added to the process's environment at every start: a {@link FakeClock}'s, or nothing. */
    private final Map<String, String> environment;

    private final MemberProcess process;
    private final Thread shutdownHook;
    private boolean closed;

    private RedisServer(
            String kind,
            boolean sentinel,
            String host,
            List<String> launcher,
            int port,
            Path workDir,
            Map<String, String> environment) {
        this.kind = kind;
        this.environment = Map.copyOf(environment);
        this.sentinel = sentinel;
        this.host = host;
        this.launcher = List.copyOf(launcher);
        this.port = port;
        this.workDir = workDir;
        this.configFile = workDir.resolve(sentinel ? "sentinel.conf" : "redis.conf");
        this.process = new MemberProcess(kind + " at " + host + ":" + port, workDir.resolve("redis.log"));
        this.shutdownHook = new Thread(this::close, "disco-redis-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts a standalone primary and waits until it answers {@code PING}.
     *
     * @return the running server; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} is not installed (the message says how to install it),
     *     or the server did not answer within {@value #START_TIMEOUT_SECONDS} s (the message holds its log's tail)
     */
    public static RedisServer start() {
        return start(Map.of());
    }

    /**
     * Starts a standalone primary with settings of the test's own and waits until it answers {@code PING}.
     *
     * @param extraConfig settings that replace the defaults or add to them, name to value (an empty value is written
     *     as {@code ""}), e.g. {@code Map.of("appendfsync", "everysec")}
     * @return the running server; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} is not installed (the message says how to install it),
     *     or the server did not answer within {@value #START_TIMEOUT_SECONDS} s (the message holds its log's tail)
     */
    public static RedisServer start(Map<String, String> extraConfig) {
        Objects.requireNonNull(extraConfig, "extraConfig");
        return launch("Redis server", false, Map.of(), (port, dir) -> dataServerLines(port, dir, null, extraConfig));
    }

    /**
     * Starts a standalone primary whose wall clock is {@code clock} (libfaketime preloaded into the process; a {@link
     * #restart()} keeps it on the clock), as {@link #start(Map)} does otherwise. {@link FakeClock#step(long)} then
     * moves the server's {@code TIME} and every key's expiry at once: a step forward expires keys early, a step back
     * makes them live longer.
     *
     * <pre>{@code
     * try (FakeClock clock = new FakeClock(); RedisServer redis = RedisServer.start(Map.of(), clock)) {
     *     clock.step(30); // the server's wall clock 30 s ahead: a key with 10 s left is gone
     * }
     * }</pre>
     *
     * @param extraConfig settings that replace the defaults or add to them, name to value
     * @param clock the server's wall clock; close it after the server
     * @return the running server; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} or libfaketime is not installed (the message says how to
     *     install it), or the server did not answer within {@value #START_TIMEOUT_SECONDS} s
     */
    public static RedisServer start(Map<String, String> extraConfig, FakeClock clock) {
        Objects.requireNonNull(extraConfig, "extraConfig");
        Objects.requireNonNull(clock, "clock");
        Map<String, String> environment = clock.environment(); // fails with how to install libfaketime
        return launch(
                "Redis server on a fake clock",
                false,
                environment,
                (port, dir) -> dataServerLines(port, dir, null, extraConfig));
    }

    /**
     * Starts a replica of {@code primary} ({@code replicaof}) and waits until its link to the primary is up (its
     * first sync done).
     *
     * @param primary the server to replicate
     * @return the running replica; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} is not installed, or the replica did not answer or sync
     *     within {@value #START_TIMEOUT_SECONDS} s
     */
    public static RedisServer startReplicaOf(RedisServer primary) {
        return startReplicaOf(primary, Map.of());
    }

    /**
     * Starts a replica of {@code primary} with settings of the test's own, as {@link #startReplicaOf(RedisServer)}.
     *
     * @param primary the server to replicate
     * @param extraConfig settings that replace the defaults or add to them, name to value
     * @return the running replica; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} is not installed, or the replica did not answer or sync
     *     within {@value #START_TIMEOUT_SECONDS} s
     */
    public static RedisServer startReplicaOf(RedisServer primary, Map<String, String> extraConfig) {
        Objects.requireNonNull(primary, "primary");
        Objects.requireNonNull(extraConfig, "extraConfig");
        RedisServer replica = launch(
                "Redis replica",
                false,
                Map.of(),
                (port, dir) -> dataServerLines(port, dir, primary.address(), extraConfig));
        return LocalResources.startedOrClosed(replica, replica::awaitReplicaLink, replica::close);
    }

    /** A sentinel ({@code redis-server <config> --sentinel}) with {@code sentinelLines} after the common ones. */
    static RedisServer startSentinel(List<String> sentinelLines) {
        return launch("Redis sentinel", true, Map.of(), (port, dir) -> {
            List<String> lines = new ArrayList<>(commonLines(port, dir));
            lines.addAll(sentinelLines);
            return lines;
        });
    }

    /** A data server (a cluster node) with {@code extraConfig}, which {@code extra} may compute from port and dir. */
    static RedisServer startWith(String kind, Config extra) {
        return launch(kind, false, Map.of(), (port, dir) -> {
            Map<String, String> settings = new LinkedHashMap<>();
            for (String line : extra.lines(port, dir)) {
                int space = line.indexOf(' ');
                settings.put(line.substring(0, space), line.substring(space + 1));
            }
            return dataServerLines(port, dir, null, settings);
        });
    }

    private static List<String> commonLines(int port, Path dir) {
        return commonLines(HOST, port, dir);
    }

    private static List<String> commonLines(String host, int port, Path dir) {
        return List.of(
                "port " + port,
                "bind " + host,
                "protected-mode no",
                "daemonize no",
                "logfile \"\"",
                "dir " + dir.toAbsolutePath());
    }

    private static List<String> dataServerLines(
            int port, Path dir, RedisAddress primary, Map<String, String> extraConfig) {
        return dataServerLines(HOST, port, dir, primary, extraConfig);
    }

    /** A data server's lines, bound to {@code host}: a replica announces that address to its primary. */
    static List<String> dataServerLines(
            String host, int port, Path dir, RedisAddress primary, Map<String, String> extraConfig) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("appendonly", "yes");
        settings.put("appendfsync", "always");
        settings.put("save", "");
        settings.put("enable-debug-command", "yes");
        // a replica's full sync starts at once, not after the 5 s Redis 7 waits for more replicas to share it
        settings.put("repl-diskless-sync-delay", "0");
        if (primary != null) {
            settings.put("replicaof", primary.host() + " " + primary.port());
        }
        if (!host.equals(HOST)) {
            settings.put("replica-announce-ip", host); // what its primary and the sentinels name it by
        }
        settings.putAll(extraConfig);
        List<String> lines = new ArrayList<>(commonLines(host, port, dir));
        settings.forEach((name, value) -> lines.add(name + " " + (value.isEmpty() ? "\"\"" : value)));
        return lines;
    }

    /**
     * Picks a free port, writes the configuration in a new directory and starts the server, waiting until it answers
     * {@code PING}; a start that failed because another process took the port meanwhile is tried again on a fresh
     * port.
     */
    private static RedisServer launch(String kind, boolean sentinel, Map<String, String> environment, Config config) {
        Path binary = RedisBinary.server();
        return LocalResources.startOnFreePorts(
                () -> {
                    RedisServer server = new RedisServer(
                            kind,
                            sentinel,
                            HOST,
                            List.of(),
                            freePort(kind),
                            LocalResources.scratchDir("disco-redis-", kind),
                            environment);
                    return new LocalResources.PortAttempt<>(server, server::portTaken);
                },
                server -> server.firstStart(binary, config),
                RedisServer::close);
    }

    /**
     * Starts a server bound to {@code host} on {@code port}, run with {@code launcher} before its command (to run it
     * in a network namespace: {@link MemberNetwork#launcher}), and waits until it answers {@code PING}; with
     * {@code replica} also until its link to the primary is up. No port is tried again: the caller owns the address (a
     * namespace's own).
     *
     * @param config its lines for its port and directory ({@link #sentinelConfig}, {@link #dataServerConfig})
     */
    static RedisServer startAt(
            String kind,
            boolean sentinel,
            boolean replica,
            String host,
            int port,
            List<String> launcher,
            Config config) {
        Path binary = RedisBinary.server();
        RedisServer server = new RedisServer(
                kind, sentinel, host, launcher, port, LocalResources.scratchDir("disco-redis-", kind), Map.of());
        return LocalResources.startedOrClosed(
                server,
                () -> {
                    server.firstStart(binary, config);
                    if (replica) {
                        server.awaitReplicaLink();
                    }
                },
                server::close);
    }

    /** A sentinel's common lines bound to {@code host}, {@code sentinelLines} after them. */
    static Config sentinelConfig(String host, List<String> sentinelLines) {
        return (port, dir) -> {
            List<String> lines = new ArrayList<>(commonLines(host, port, dir));
            lines.addAll(sentinelLines);
            return lines;
        };
    }

    /** A data server's configuration bound to {@code host}, a replica of {@code primary} unless it is null. */
    static Config dataServerConfig(String host, RedisAddress primary) {
        return (port, dir) -> dataServerLines(host, port, dir, primary, Map.of());
    }

    /** @return a free loopback port, never one a system instance of Redis may use */
    static int freePort(String forWhat) {
        while (true) {
            int port = LocalResources.freePorts(1, forWhat)[0];
            if (!RESERVED_PORTS.contains(port)) {
                return port;
            }
        }
    }

    private synchronized void firstStart(Path binary, Config config) {
        try {
            Files.write(configFile, config.lines(port, workDir));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + configFile, e);
        }
        launchProcess(binary);
        awaitReady();
    }

    private void launchProcess(Path binary) {
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(binary.toString(), configFile.toString()));
        if (sentinel) {
            command.add("--sentinel");
        }
        try {
            process.launch(command, environment);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start " + binary + ": " + e.getMessage() + ". " + RedisBinary.NO_SERVER, e);
        }
    }

    /** Asks {@code PING} until the answer is {@code PONG} (not {@code LOADING}), the process exits, or time is up. */
    private void awaitReady() {
        long deadline =
                System.nanoTime() + Duration.ofSeconds(START_TIMEOUT_SECONDS).toNanos();
        String last = "nothing";
        while (true) {
            if (!process.isRunning()) {
                throw new IllegalStateException(this + " exited while starting; log tail:\n" + process.logTail());
            }
            try {
                Object pong = Resp.call(host, port, Duration.ofMillis(500), "PING");
                if ("PONG".equals(pong)) {
                    return;
                }
                last = String.valueOf(pong);
            } catch (Resp.ErrorReply | UncheckedIOException e) {
                last = e.getMessage(); // LOADING while it reads its append-only file, or not listening yet
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(this + " did not answer PING within " + START_TIMEOUT_SECONDS
                        + " s (last: " + last + "); log tail:\n" + process.logTail());
            }
            pauseUnlessExited();
        }
    }

    /** Waits until {@code INFO replication} says {@code master_link_status:up}, bounded. */
    private void awaitReplicaLink() {
        long deadline =
                System.nanoTime() + Duration.ofSeconds(START_TIMEOUT_SECONDS).toNanos();
        while (!info("replication").contains("master_link_status:up")) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(this + " did not sync with its primary within " + START_TIMEOUT_SECONDS
                        + " s; log tail:\n" + process.logTail());
            }
            pauseUnlessExited();
        }
    }

    /** A short pause between two polls that ends early if the process exits (the next poll then fails at once). */
    private void pauseUnlessExited() {
        try {
            process.awaitExit(20); // redis-server offers no event for "listening" or "synced"
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + this, e);
        }
    }

    /** @return whether the log says the port was taken (by another process since it was picked) */
    private boolean portTaken() {
        return process.logTail().contains("Address already in use");
    }

    /** @return {@code 127.0.0.1}, or its address in a {@link MemberNetwork} */
    public String host() {
        return host;
    }

    /** @return the TCP port on {@link #host()} */
    public int port() {
        return port;
    }

    /** @return {@link #host()} and {@link #port()} */
    public RedisAddress address() {
        return new RedisAddress(host, port);
    }

    /** @return the server's URI for a client, {@code redis://<host>:<port>} */
    public String uri() {
        return "redis://" + host + ":" + port;
    }

    /** @return the process id of the process last started (it may have been killed since) */
    public synchronized long pid() {
        return process.pid();
    }

    /** @return whether the process runs (frozen counts as running) */
    public synchronized boolean isRunning() {
        return process.isRunning();
    }

    /**
     * Kills the process with SIGKILL (a frozen one too) and waits until it is gone; its directory and append-only
     * file stay, for {@link #restart()}. Does nothing if it is not running.
     *
     * @throws IllegalStateException if the server is closed, or the process did not exit within 10 s
     */
    public synchronized void kill() {
        requireOpen("kill");
        process.kill();
    }

    /**
     * Starts the server again as the same server: the same port, directory, configuration file (as the server or a
     * sentinel may have rewritten it) and append-only file; kills it first (SIGKILL) if it runs. Waits until it
     * answers {@code PING}, that is, until it has loaded its data.
     *
     * @throws IllegalStateException if the server is closed, or it did not answer within {@value
     *     #START_TIMEOUT_SECONDS} s (the message holds its log's tail; the process is killed)
     */
    public synchronized void restart() {
        requireOpen("restart");
        process.kill();
        launchProcess(RedisBinary.server());
        try {
            awaitReady();
        } catch (RuntimeException e) {
            process.kill();
            throw e;
        }
    }

    /**
     * Freezes the process (SIGSTOP) and waits until every thread of it is stopped: from then on connections are
     * accepted by the kernel but no command is answered, until {@link #resume()}.
     *
     * @throws IllegalStateException if the server is closed or not running
     */
    public synchronized void freeze() {
        requireOpen("freeze");
        process.pause();
    }

    /**
     * Lets a frozen process go on (SIGCONT).
     *
     * @throws IllegalStateException if the server is closed or not running
     */
    public synchronized void resume() {
        requireOpen("resume");
        process.resume();
    }

    /**
     * Reads a setting ({@code CONFIG GET}; sentinels answer no {@code CONFIG}).
     *
     * @param key the setting's exact name, e.g. {@code appendfsync}
     * @return its value, or null if the server has no such setting
     * @throws IllegalStateException if the server answers with an error, or does not answer within 5 s
     */
    public String config(String key) {
        Objects.requireNonNull(key, "key");
        List<?> pairs = (List<?>) command("CONFIG", "GET", key);
        for (int i = 0; i + 1 < pairs.size(); i += 2) {
            if (key.equalsIgnoreCase(String.valueOf(pairs.get(i)))) {
                return (String) pairs.get(i + 1);
            }
        }
        return null;
    }

    /**
     * Changes a setting at run time ({@code CONFIG SET}); a {@link #restart()} goes back to the configuration file.
     *
     * @param key the setting's name, e.g. {@code appendfsync}
     * @param value its new value, e.g. {@code everysec}
     * @throws IllegalStateException if the server refuses (the message is its error), or does not answer within 5 s
     */
    public void config(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        command("CONFIG", "SET", key, value);
    }

    /**
     * @return the server's role as {@code ROLE} names it: {@code master}, {@code slave} or {@code sentinel}
     * @throws IllegalStateException if the server does not answer within 5 s
     */
    public String role() {
        return (String) ((List<?>) command("ROLE")).get(0);
    }

    /**
     * Sends one command on a connection of its own and returns the reply: a simple or bulk string as {@link String},
     * an integer as {@link Long}, an array as {@link List}, a null reply as {@code null}.
     *
     * @param args the command and its arguments, e.g. {@code "SET", "k", "v"}
     * @return the reply
     * @throws IllegalStateException if the server answers with an error (the message is the error, e.g. {@code MOVED
     *     866 127.0.0.1:7001}) or with nothing within 5 s (a frozen server), or cannot be reached
     */
    public Object command(String... args) {
        return command(CALL_TIMEOUT, args);
    }

    /** {@link #command(String...)} with a reply timeout of the caller's choice. */
    Object command(Duration timeout, String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("no command");
        }
        try {
            return Resp.call(host, port, timeout, args);
        } catch (UncheckedIOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** @return {@code INFO <section>}'s text */
    String info(String section) {
        return (String) command("INFO", section);
    }

    /** @return the last few KB of the server's log */
    String logTail() {
        return process.logTail();
    }

    /** @return its data directory */
    Path workDir() {
        return workDir;
    }

    private void requireOpen(String operation) {
        if (closed) {
            throw new IllegalStateException("cannot " + operation + " " + this + ": it is closed");
        }
    }

    /** Kills the process (SIGKILL) and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        IllegalStateException failure = new IllegalStateException("closing " + this + " failed");
        LocalResources.closeStep(process::kill, failure);
        LocalResources.deleteTree(workDir, failure);
        LocalResources.dropShutdownHook(shutdownHook);
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return kind + " at " + host + ":" + port + " (" + workDir + ")";
    }
}

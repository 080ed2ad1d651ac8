package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL server for tests: Debian's {@code postgresql} package's {@code initdb} and
 * {@code pg_ctl}, a data directory in a temporary folder, a free loopback port, the Unix socket in the
 * same folder, trust authentication for the user {@code postgres}, fsync off. PostgreSQL refuses to run
 * as root, so as root it runs as the {@code postgres} user the package creates (through {@code runuser});
 * otherwise as the current user.
 *
 * <p>The binaries are taken from {@code DISCO_PG_BIN} (a directory holding {@code initdb} and
 * {@code pg_ctl}) or else from the newest {@code /usr/lib/postgresql/<version>/bin}. Without them,
 * {@link #start()} fails with how to install them: tests that need PostgreSQL fail, they never skip.
 *
 * <pre>{@code
 * try (PostgresServer pg = PostgresServer.start()) {
 *     Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), "");
 * }
 * }</pre>
 *
 * {@link PostgresExtension#shared()} runs one for a whole test run.
 */
public final class PostgresServer implements AutoCloseable {

    private static final String DEBIAN_ROOT = "/usr/lib/postgresql";
    private static final String INSTALL =
            "PostgreSQL not found: install it with `apt-get install postgresql` (Debian/Ubuntu;"
                    + " the README test command ./test does when it runs as root), or set DISCO_PG_BIN to the directory holding"
                    + " initdb and pg_ctl";

    private final Path bin;
    private final Path workDir;
    private final int port;
    private final boolean asPostgres;
    private boolean closed;

    private PostgresServer(Path bin, Path workDir, int port, boolean asPostgres) {
        this.bin = bin;
        this.workDir = workDir;
        this.port = port;
        this.asPostgres = asPostgres;
    }

    /**
     * Creates a database cluster in a temporary folder and starts a server on it; waits until it accepts
     * connections.
     *
     * @return the running server; close it to stop it and delete its folder
     * @throws IllegalStateException if PostgreSQL is not installed (the message says how to install it),
     *     or initdb or the server fails (the message holds their output)
     */
    public static PostgresServer start() {
        Path bin = binaries();
        boolean asPostgres = "root".equals(System.getProperty("user.name"));
        Path workDir;
        try {
            workDir = Files.createTempDirectory("disco-pg-");
            if (asPostgres) {
                UserPrincipal postgres =
                        workDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
                Files.setOwner(workDir, postgres);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot create a folder for PostgreSQL (as root the package's postgres user"
                            + " must exist: apt-get install postgresql)",
                    e);
        }
        PostgresServer server = null;
        try {
            int port = freePort();
            server = new PostgresServer(bin, workDir, port, asPostgres);
            server.run(
                    60,
                    bin.resolve("initdb").toString(),
                    "-D",
                    server.dataDir().toString(),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "-N");
            server.run(
                    60,
                    bin.resolve("pg_ctl").toString(),
                    "-D",
                    server.dataDir().toString(),
                    "-l",
                    workDir.resolve("server.log").toString(),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    "-p " + port + " -h 127.0.0.1 -k " + workDir + " -F -c max_connections=50",
                    "start");
            return server;
        } catch (RuntimeException | Error e) {
            if (server != null) {
                String log = server.log();
                server.close();
                throw new IllegalStateException(e.getMessage() + (log.isEmpty() ? "" : "\nserver log:\n" + log), e);
            }
            deleteRecursively(workDir);
            throw e;
        }
    }

    private static Path binaries() {
        return binaries(System.getenv("DISCO_PG_BIN"), Paths.get(DEBIAN_ROOT));
    }

    /** The directory of initdb and pg_ctl: {@code env} if set, else the newest version under {@code root}. */
    static Path binaries(String env, Path root) {
        if (env != null && !env.isBlank()) {
            Path dir = Paths.get(env);
            if (!Files.isExecutable(dir.resolve("initdb")) || !Files.isExecutable(dir.resolve("pg_ctl"))) {
                throw new IllegalStateException("DISCO_PG_BIN=" + env + " holds no executable initdb and pg_ctl");
            }
            return dir;
        }
        if (!Files.isDirectory(root)) {
            throw new IllegalStateException(INSTALL);
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
                    .max(Comparator.comparingDouble(PostgresServer::version))
                    .orElseThrow(() -> new IllegalStateException(INSTALL));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    private static double version(Path bin) {
        try {
            return Double.parseDouble(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port for PostgreSQL", e);
        }
    }

    private Path dataDir() {
        return workDir.resolve("data");
    }

    /** Runs a command (as the postgres user when this process is root) and returns its output. */
    private String run(int timeoutSeconds, String... command) {
        List<String> cmd = new ArrayList<>();
        if (asPostgres) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.addAll(List.of(command));
        try {
            Process p = new ProcessBuilder(cmd)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .start();
            p.getOutputStream().close();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " did not finish within " + timeoutSeconds + " s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (" + p.exitValue() + "): " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command[0], e);
        }
    }

    private String log() {
        try {
            Path log = workDir.resolve("server.log");
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** @return the JDBC URL of the database {@code postgres} over TCP on the loopback address */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** @return the user to connect as, {@code postgres} (trust authentication: any password, or none) */
    public String user() {
        return "postgres";
    }

    /** @return the server's TCP port on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** Stops the server at once ({@code pg_ctl stop -m immediate}) and deletes its folder. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (Files.exists(dataDir().resolve("postmaster.pid"))) {
                run(30, bin.resolve("pg_ctl").toString(), "-D", dataDir().toString(), "-m", "immediate", "-w", "stop");
            }
        } finally {
            deleteRecursively(workDir);
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary folder
        }
    }

    @Override
    public String toString() {
        return "PostgreSQL on 127.0.0.1:" + port + " ("
                + Optional.ofNullable(bin.getParent()).orElse(bin) + ")";
    }
}

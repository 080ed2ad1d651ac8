package io.disco.testservers;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Finding the Redis binaries that {@link RedisServer}, {@link RedisSentinelSet} and {@link RedisClusterSet} run:
 * {@code redis-server} (Debian's {@code redis-server} package; sentinels are {@code redis-server --sentinel}) and
 * {@code redis-cli} (Debian's {@code redis-tools}, for {@code --cluster create}), on {@code PATH} or else in
 * {@code /usr/bin}. Without them the servers fail with an {@link IllegalStateException} that says how to install
 * them: tests that need Redis fail, they never skip. The first server a JVM starts prints {@code disco-test-servers:
 * Redis server v=7.x.y at /path} on standard error, so a test run's log says which Redis it ran on.
 */
final class RedisBinary {

    /** The message when there is no {@code redis-server}. */
    static final String NO_SERVER = "redis-server not found: install Debian's redis-server package"
            + " (apt-get install redis-server), or put redis-server on the PATH";
    /** The message when there is no {@code redis-cli}. */
    static final String NO_CLI = "redis-cli not found: install Debian's redis-tools package"
            + " (apt-get install redis-tools), or put redis-cli on the PATH";

    private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();

    private RedisBinary() {}

    /**
     * @return {@code redis-server}, announced on standard error the first time
     * @throws IllegalStateException if it is not installed (the message says how to install it)
     */
    static Path server() {
        Path server = find("redis-server", System.getenv().getOrDefault("PATH", ""), Paths.get("/usr/bin"));
        if (server == null) {
            throw new IllegalStateException(NO_SERVER);
        }
        VERSIONS.computeIfAbsent(server.toAbsolutePath(), RedisBinary::announce);
        return server;
    }

    /**
     * @return {@code redis-cli}
     * @throws IllegalStateException if it is not installed (the message says how to install it)
     */
    static Path cli() {
        Path cli = find("redis-cli", System.getenv().getOrDefault("PATH", ""), Paths.get("/usr/bin"));
        if (cli == null) {
            throw new IllegalStateException(NO_CLI);
        }
        return cli;
    }

    /** @return the executable {@code name} in a directory of {@code path}, else in {@code fallback}, else null */
    static Path find(String name, String path, Path fallback) {
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path candidate = Paths.get(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        Path candidate = fallback.resolve(name);
        return Files.isRegularFile(candidate) && Files.isExecutable(candidate) ? candidate : null;
    }

    /** Runs {@code redis-server --version} and prints what it says on standard error. */
    private static String announce(Path server) {
        String version;
        try {
            Process process = new ProcessBuilder(server.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(server + " --version did not finish within 10 s");
            }
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (process.exitValue() != 0 || !out.startsWith("Redis server v=")) {
                throw new IllegalStateException(
                        server + " does not look like redis-server (`--version` printed: " + out + "). " + NO_SERVER);
            }
            // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
            version = out.split(" ")[2];
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + server + ": " + e.getMessage() + ". " + NO_SERVER, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + server + " --version", e);
        }
        System.err.println("disco-test-servers: Redis server " + version + " at " + server);
        return version;
    }
}

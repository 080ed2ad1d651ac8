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
 * Finding and describing the etcd binary (and its {@code etcdctl}) that {@link EtcdCluster} starts
 * local members from: {@value EtcdCluster#ENV_BINARY}, else {@code etcd} on {@code PATH}. The first
 * time a JVM starts members from a binary it prints {@code disco-test-servers: etcd 3.x.y at /path} on
 * standard error, so a test run's log says which etcd it ran on.
 */
final class EtcdBinary {

    /** What to do when there is no etcd; ends every "no etcd" message. */
    static final String INSTALL_HINT = "Install etcd (Debian/Ubuntu: `sudo apt-get install etcd-server etcd-client`), "
            + "or set " + EtcdCluster.ENV_BINARY + " to an etcd binary, or set " + EtcdCluster.ENV_ENDPOINTS
            + " to the client URLs of a running cluster (e.g. http://127.0.0.1:2379), "
            + "or run a Docker engine so that Testcontainers can start etcd.";

    /** {@code binary --version}'s answer per binary (absolute path): asked and announced once per JVM. */
    private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();

    private EtcdBinary() {}

    /**
     * @return {@value EtcdCluster#ENV_BINARY} from {@code env} if set, else {@code etcd} on {@code env}'s
     *     {@code PATH}, else null
     * @throws IllegalStateException if {@value EtcdCluster#ENV_BINARY} is set but not an executable file
     */
    static Path find(Map<String, String> env) {
        String configured = env.get(EtcdCluster.ENV_BINARY);
        if (configured != null && !configured.isBlank()) {
            Path path = Paths.get(configured);
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException(
                        EtcdCluster.ENV_BINARY + "=" + configured + " is not an executable file. " + INSTALL_HINT);
            }
            return path;
        }
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path candidate = Paths.get(dir, "etcd");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    /**
     * The first call for a binary runs it and prints {@code disco-test-servers: etcd 3.x.y at <binary>} on
     * standard error; later calls answer from memory.
     *
     * @return {@code "etcd 3.x.y"} from {@code binary --version}
     * @throws IllegalStateException if it cannot run, takes over 10 s or does not look like etcd
     */
    static String version(Path binary) {
        return VERSIONS.computeIfAbsent(binary.toAbsolutePath(), path -> {
            String version = ask(path);
            System.err.println("disco-test-servers: " + version + " at " + path);
            return version;
        });
    }

    private static String ask(Path binary) {
        try {
            Process process = new ProcessBuilder(binary.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(binary + " --version did not finish within 10 s");
            }
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String first = out.lines().findFirst().orElse("").trim();
            if (process.exitValue() != 0 || !first.startsWith("etcd Version:")) {
                throw new IllegalStateException(
                        binary + " does not look like etcd (`--version` printed: " + out.trim() + "). " + INSTALL_HINT);
            }
            return "etcd " + first.substring("etcd Version:".length()).trim();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage() + ". " + INSTALL_HINT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + binary + " --version", e);
        }
    }

    /** @return the executable {@code name} on the process's {@code PATH}, or null */
    static Path findOnPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Paths.get(dir, name);
            if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }
}

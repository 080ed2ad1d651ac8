package io.disco.testing;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One etcd process started from a local binary, with fixed ports, data dir and log file so that
 * it can be stopped and started again as the same member. Not thread-safe: {@link EtcdCluster}
 * serialises access.
 */
final class LocalMember {

    private static final long EXIT_TIMEOUT_SECONDS = 10;
    private static final int LOG_TAIL_BYTES = 4096;

    final String name;
    final int clientPort;
    final int peerPort;
    final Path dataDir;
    final Path logFile;
    private Process process;
    private boolean paused;

    private final EtcdTls tls;
    private final List<String> extraFlags;
    /** The address it listens on: loopback, or its own in a {@link MemberNetwork}. */
    private final String host;
    /** What its command is prefixed with: nothing, or the entry into its network namespace. */
    private final List<String> launcher;
    /** The peer URL it advertises: its own, or its proxy's ({@link PeerLinks}); set before the launch. */
    String advertisedPeerUrl;
    /**
     * Whether it syncs its writes and uses etcd's default heartbeat (100 ms) and election timeout
     * (1 s), like a production member; else {@code --unsafe-no-fsync} and 10 ms / 100 ms.
     */
    boolean durable;

    LocalMember(String name, int clientPort, int peerPort, Path dir, EtcdTls tls, List<String> extraFlags) {
        this(name, "127.0.0.1", List.of(), clientPort, peerPort, dir, tls, extraFlags);
    }

    LocalMember(String name, String host, List<String> launcher, int clientPort, int peerPort, Path dir, EtcdTls tls,
                List<String> extraFlags) {
        this.host = host;
        this.launcher = List.copyOf(launcher);
        this.tls = tls;
        this.extraFlags = List.copyOf(extraFlags);
        this.name = name;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.dataDir = dir.resolve(name + ".data");
        this.logFile = dir.resolve(name + ".log");
        this.advertisedPeerUrl = peerUrl();
    }

    String endpoint() {
        return (tls == null ? "http" : "https") + "://" + host + ":" + clientPort;
    }

    String peerUrl() {
        return "http://" + host + ":" + peerPort;
    }

    /** Starts the process; its stdout and stderr are appended to {@link #logFile}. */
    void launch(Path binary, String clusterToken, String initialCluster, boolean existing) throws IOException {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of(
                binary.toString(),
                "--name=" + name,
                "--data-dir=" + dataDir,
                "--listen-client-urls=" + endpoint(),
                "--advertise-client-urls=" + endpoint(),
                "--listen-peer-urls=" + peerUrl(),
                "--initial-advertise-peer-urls=" + advertisedPeerUrl,
                "--initial-cluster=" + initialCluster,
                "--initial-cluster-token=" + clusterToken,
                "--initial-cluster-state=" + (existing ? "existing" : "new"),
                "--auto-compaction-retention=0",
                "--enable-v2=false",
                "--logger=zap"));
        cmd.addAll(durable ? List.of("--heartbeat-interval=100", "--election-timeout=1000")
                : List.of("--heartbeat-interval=10", "--election-timeout=100", "--unsafe-no-fsync"));
        if (tls != null) {
            cmd.addAll(tls.memberFlags());
        }
        cmd.addAll(extraFlags);
        process = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        paused = false;
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Waits up to {@code millis} for the process to exit; returns whether it has exited. */
    boolean awaitExit(long millis) throws InterruptedException {
        return process == null || process.waitFor(millis, TimeUnit.MILLISECONDS);
    }

    long pid() {
        return process == null ? -1 : process.pid();
    }

    /** SIGKILL (delivered to stopped processes too), then waits for the exit. */
    void kill() {
        if (process != null) {
            process.destroyForcibly();
            awaitExitOrFail("SIGKILL");
        }
    }

    /** SIGTERM (after SIGCONT if paused), waits for a graceful exit, falls back to SIGKILL. */
    void stop() {
        if (!isRunning()) {
            return;
        }
        if (paused) {
            signal("CONT");
        }
        process.destroy();
        try {
            if (process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill();
    }

    void pause() {
        requireRunning("pause");
        signal("STOP");
        paused = true;
    }

    void resume() {
        requireRunning("resume");
        signal("CONT");
        paused = false;
    }

    private void requireRunning(String operation) {
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + operation + " etcd member " + name + ": it is not running");
        }
    }

    /** Java has no SIGSTOP/SIGCONT API, so this runs {@code kill -SIG pid}. */
    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " did not finish");
            }
            if (kill.exitValue() != 0) {
                String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " for etcd member " + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling etcd member " + name, e);
        }
    }

    private void awaitExitOrFail(String what) {
        try {
            if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("etcd member " + name + " (pid " + process.pid() + ") did not exit within "
                        + EXIT_TIMEOUT_SECONDS + " s after " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for etcd member " + name + " to exit", e);
        }
    }

    /** The last few KB of the member's log, for error messages. */
    String logTail() {
        if (!Files.exists(logFile)) {
            return "(no log)";
        }
        try (RandomAccessFile file = new RandomAccessFile(logFile.toFile(), "r")) {
            long start = Math.max(0, file.length() - LOG_TAIL_BYTES);
            byte[] bytes = new byte[(int) (file.length() - start)];
            file.seek(start);
            file.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + logFile + ": " + e + ")";
        }
    }
}

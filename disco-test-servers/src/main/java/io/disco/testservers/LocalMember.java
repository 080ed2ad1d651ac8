package io.disco.testservers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One etcd process started from a local binary, with fixed ports, data dir and log file so that
 * it can be stopped and started again as the same member (its process: {@link MemberProcess}).
 * Not thread-safe: {@link EtcdCluster} serialises access.
 */
final class LocalMember {

    final String name;
    final int clientPort;
    final int peerPort;
    final Path dataDir;
    final Path logFile;
    private final MemberProcess process;

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

    LocalMember(
            String name,
            String host,
            List<String> launcher,
            int clientPort,
            int peerPort,
            Path dir,
            EtcdTls tls,
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
        this.process = new MemberProcess("etcd member " + name, logFile);
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
        cmd.addAll(
                durable
                        ? List.of("--heartbeat-interval=100", "--election-timeout=1000")
                        : List.of("--heartbeat-interval=10", "--election-timeout=100", "--unsafe-no-fsync"));
        if (tls != null) {
            cmd.addAll(tls.memberFlags());
        }
        cmd.addAll(extraFlags);
        process.launch(cmd);
    }

    boolean isRunning() {
        return process.isRunning();
    }

    /** Waits up to {@code millis} for the process to exit; returns whether it has exited. */
    boolean awaitExit(long millis) throws InterruptedException {
        return process.awaitExit(millis);
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL (delivered to stopped processes too), then waits for the exit. */
    void kill() {
        process.kill();
    }

    /** SIGTERM (after SIGCONT if paused), waits for a graceful exit, falls back to SIGKILL. */
    void stop() {
        process.stop();
    }

    void pause() {
        process.pause();
    }

    void resume() {
        process.resume();
    }

    /** The last few KB of the member's log, for error messages. */
    String logTail() {
        return process.logTail();
    }
}

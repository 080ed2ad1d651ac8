package io.disco.testservers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One ZooKeeper server of a {@link ZooKeeperEnsemble}: {@code QuorumPeerMain} in a JVM of its own, with fixed
 * ports, data dir ({@code myid}, configuration, snapshots and log) and log file, so that it can be killed and
 * started again as the same server. Asked for its mode with the {@code srvr} four-letter word, bounded by a
 * socket timeout (a frozen server answers nothing). Not thread-safe: the ensemble serialises access.
 */
final class ZooKeeperMember {

    /** The main class of a quorum server. */
    static final String MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

    private static final int ASK_TIMEOUT_MILLIS = 1000;

    /** ZooKeeper's server id, 1-based. */
    final int id;
    /** The address it listens on: loopback, or its own in a {@link MemberNetwork}. */
    final String host;
    /**
     * The address the others reach its quorum and election ports at: {@link #host}, or its {@link PeerLinks}
     * proxies' (it then listens on every address of its namespace, {@code quorumListenOnAllIPs}).
     */
    final String peerHost;
    /** What its command is prefixed with: nothing, or the entry into its network namespace. */
    private final List<String> launcher;

    final int clientPort;
    final int quorumPort;
    final int electionPort;
    final Path dataDir;
    final MemberProcess process;

    ZooKeeperMember(int id, int clientPort, int quorumPort, int electionPort, Path workDir) {
        this(id, "127.0.0.1", "127.0.0.1", List.of(), clientPort, quorumPort, electionPort, workDir);
    }

    ZooKeeperMember(
            int id,
            String host,
            String peerHost,
            List<String> launcher,
            int clientPort,
            int quorumPort,
            int electionPort,
            Path workDir) {
        this.id = id;
        this.host = host;
        this.peerHost = peerHost;
        this.launcher = List.copyOf(launcher);
        this.clientPort = clientPort;
        this.quorumPort = quorumPort;
        this.electionPort = electionPort;
        this.dataDir = workDir.resolve("zk" + id + ".data");
        this.process = new MemberProcess(
                "ZooKeeper member zk" + id + " (" + host + ":" + clientPort + ")", workDir.resolve("zk" + id + ".log"));
    }

    /** @return its {@code server.<id>} line */
    String serverLine() {
        return "server." + id + "=" + peerHost + ":" + quorumPort + ":" + electionPort + ":participant;" + host + ":"
                + clientPort;
    }

    /** Writes {@code myid} and the configuration (once), then starts the JVM. */
    void launch(Path java, String classPath, int tickMillis, List<String> servers) throws IOException {
        Path cfg = dataDir.resolve("zoo.cfg");
        if (!Files.exists(cfg)) {
            Files.createDirectories(dataDir);
            Files.writeString(dataDir.resolve("myid"), Integer.toString(id));
            List<String> lines = new ArrayList<>(List.of(
                    "tickTime=" + tickMillis,
                    "initLimit=50",
                    "syncLimit=20",
                    "dataDir=" + dataDir,
                    "clientPort=" + clientPort,
                    "clientPortAddress=" + host,
                    "minSessionTimeout=" + 2 * tickMillis,
                    "maxSessionTimeout=60000",
                    "standaloneEnabled=false",
                    "reconfigEnabled=false",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=srvr,ruok",
                    "forceSync=no",
                    "maxClientCnxns=0"));
            if (!peerHost.equals(host)) {
                lines.add("quorumListenOnAllIPs=true");
            }
            lines.addAll(servers);
            Files.write(cfg, lines);
        }
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(
                java.toString(),
                "-Xmx192m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true",
                "-Dzookeeper.forceSync=no",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp",
                classPath,
                MAIN,
                cfg.toString()));
        process.launch(command);
    }

    String connectString() {
        return host + ":" + clientPort;
    }

    /**
     * @return {@code leader}, {@code follower} (or another mode the server names), or why it has none:
     *     {@code down}, {@code frozen}, {@code not serving}, {@code no answer}
     */
    String mode() {
        if (!process.isRunning()) {
            return "down";
        }
        if (process.isPaused()) {
            return "frozen";
        }
        String answer = ask("srvr");
        if (answer == null) {
            return "no answer";
        }
        for (String line : answer.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return line.substring("Mode: ".length()).trim();
            }
        }
        return "not serving";
    }

    /** @return the server's answer to a four-letter word, or null when it gave none within the timeout */
    private String ask(String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, clientPort), ASK_TIMEOUT_MILLIS);
            s.setSoTimeout(ASK_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }
}

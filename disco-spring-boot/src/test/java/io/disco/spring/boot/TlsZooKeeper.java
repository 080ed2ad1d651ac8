package io.disco.spring.boot;

import io.disco.testservers.EtcdTls;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A standalone ZooKeeper server in a process of its own that speaks TLS only ({@code secureClientPort}, Netty) and
 * asks every client for a certificate ({@code ssl.clientAuth=need}), with throwaway certificates ({@link EtcdTls}'s:
 * a CA, a server certificate for {@code 127.0.0.1}, a client certificate): the server's key store and the client's
 * are PEM files of the key and the certificate, the trust stores the CA's PEM. The process runs the test JVM's
 * {@code java} on its class path (which has the ZooKeeper server); {@link #close()} kills it.
 */
final class TlsZooKeeper implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final EtcdTls certificates;
    private final Path dir;
    private final Process process;
    private final int port;

    private TlsZooKeeper(EtcdTls certificates, Path dir, Process process, int port) {
        this.certificates = certificates;
        this.dir = dir;
        this.process = process;
        this.port = port;
    }

    /** Starts the server and waits until its port accepts connections. */
    static TlsZooKeeper start() throws IOException {
        EtcdTls certificates = EtcdTls.generate(true, "disco-client");
        Path dir = Files.createTempDirectory("disco-zookeeper-tls");
        Path serverStore = dir.resolve("server-store.pem");
        Files.writeString(
                serverStore,
                Files.readString(certificates.serverKeyFile()) + Files.readString(certificates.serverCertFile()));
        Files.writeString(
                dir.resolve("client-store.pem"),
                Files.readString(certificates.clientKeyFile()) + Files.readString(certificates.clientCertFile()));
        int port = freePort();
        Path cfg = dir.resolve("zoo.cfg");
        Files.write(
                cfg,
                List.of(
                        "tickTime=100",
                        "dataDir=" + dir.resolve("data"),
                        "secureClientPort=" + port,
                        "secureClientPortAddress=127.0.0.1",
                        "minSessionTimeout=200",
                        "maxSessionTimeout=60000",
                        "admin.enableServer=false",
                        "forceSync=no",
                        "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                        "ssl.keyStore.location=" + serverStore,
                        "ssl.keyStore.type=PEM",
                        "ssl.trustStore.location=" + certificates.caFile(),
                        "ssl.trustStore.type=PEM",
                        "ssl.clientAuth=need"));
        String java = ProcessHandle.current()
                .info()
                .command()
                .orElse(Paths.get(System.getProperty("java.home"), "bin", "java")
                        .toString());
        Path log = dir.resolve("zookeeper.log");
        Process process = new ProcessBuilder(
                        java,
                        "-Xmx128m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                        "-cp",
                        System.getProperty("java.class.path"),
                        "org.apache.zookeeper.server.ZooKeeperServerMain",
                        cfg.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        TlsZooKeeper server = new TlsZooKeeper(certificates, dir, process, port);
        try {
            server.awaitListening(log);
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private void awaitListening(Path log) {
        try {
            Awaitility.await()
                    .atMost(START_TIMEOUT)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException("the TLS ZooKeeper server exited; its log: " + tail(log));
                        }
                        try (Socket s = new Socket()) {
                            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
                            return true;
                        } catch (IOException e) {
                            return false;
                        }
                    });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException(
                    "the TLS ZooKeeper server did not listen on port " + port + " within " + START_TIMEOUT
                            + "; its log: " + tail(log),
                    e);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** @return {@code 127.0.0.1:<secure port>} */
    String connectString() {
        return "127.0.0.1:" + port;
    }

    /** @return the CA certificate (PEM) that signed the server's and the client's certificates */
    Path caFile() {
        return certificates.caFile();
    }

    /** @return the client's certificate and key in one PEM file: a ZooKeeper PEM key store */
    Path clientStore() {
        return dir.resolve("client-store.pem");
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.disco.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.testservers.TlsAndPlainEtcdExtension;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --endpoints} follows the provider's rule (issue 45, item 4: {@code EtcdClients}), against a TLS
 * etcd and a plaintext one: {@code https://} is always TLS, with {@code --cacert} or else the JVM's default
 * trust store, and a failed handshake says so, naming the endpoint and what to check; {@code https://} to a
 * plaintext etcd fails saying TLS; a mixed list and TLS flags for {@code http://} endpoints are usage
 * errors. Endpoints without a scheme stay etcdctl's: {@code https://} when a TLS flag is given.
 */
class DiscoCliTlsTest {

    @RegisterExtension
    static final TlsAndPlainEtcdExtension ETCD = TlsAndPlainEtcdExtension.create();

    record Run(int code, String out, String err, long millis) {}

    private static Run disco(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long start = System.nanoTime();
        int code = DiscoCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                new ByteArrayInputStream(new byte[0]));
        Run r = new Run(
                code,
                out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        System.out.println("$ disco " + String.join(" ", args) + "  -> " + code + " (" + r.millis() + " ms)\n" + r.out()
                + r.err());
        return r;
    }

    private static String name() {
        return "/test/cli-tls/" + UUID.randomUUID();
    }

    @Test
    void httpsWithTheCaWorksAndSoDoesAnEndpointWithoutSchemeGivenACaFile() {
        Run r = disco(
                "holders",
                name(),
                "--endpoints=" + ETCD.secure().endpoint(0),
                "--cacert=" + ETCD.tls().caFile());
        assertEquals(ExitCode.NOTHING_HELD, r.code(), r.err());
        Run bare = disco(
                "holders",
                name(),
                "--endpoints=" + ETCD.secureHostPort(),
                "--cacert=" + ETCD.tls().caFile());
        assertEquals(ExitCode.NOTHING_HELD, bare.code(), bare.err());
        Run http = disco("holders", name(), "--endpoints=" + ETCD.plainHostPort());
        assertEquals(ExitCode.NOTHING_HELD, http.code(), http.err());
    }

    /** No --cacert: the JVM's default trust store, which does not hold the test CA. */
    @Test
    void httpsWithoutTheCaSaysTheHandshakeFailedAndWhatToCheck() {
        Run r = disco("holders", name(), "--endpoints=" + ETCD.secure().endpoint(0), "--command-timeout=2s");
        assertEquals(ExitCode.UNREACHABLE, r.code(), r.err());
        String lower = r.err().toLowerCase(Locale.ROOT);
        assertTrue(r.err().contains(ETCD.secureHostPort()), r.err());
        assertTrue(lower.contains("tls handshake failed"), r.err());
        assertTrue(r.err().contains("--cacert") && lower.contains("certificate"), r.err());
        // A timeout, not a hang: the command timeout, the diagnosis's own (at most 1 s), and room for a loaded
        // 2-core machine (a CI run took 4.8 s), far below what a wait without a timeout would take.
        assertTrue(
                r.millis() < 2_000 + 1_000 + 5_000,
                "within the command timeout, the diagnosis and a loaded machine's slack: " + r.millis() + " ms");
    }

    @Test
    void httpsToAPlaintextEtcdFailsSayingTls() {
        Run r = disco("holders", name(), "--endpoints=https://" + ETCD.plainHostPort(), "--command-timeout=2s");
        assertEquals(ExitCode.UNREACHABLE, r.code(), r.err());
        assertTrue(
                r.err().contains(ETCD.plainHostPort())
                        && r.err().toLowerCase(Locale.ROOT).contains("tls handshake"),
                r.err());
    }

    @Test
    void aMixedListIsAUsageErrorNamingBoth() {
        Run r = disco(
                "holders",
                name(),
                "--endpoints=" + ETCD.plain().endpoint(0) + "," + ETCD.secure().endpoint(0),
                "--cacert=" + ETCD.tls().caFile());
        assertEquals(ExitCode.USAGE, r.code(), r.err());
        assertTrue(
                r.err().contains(ETCD.plain().endpoint(0))
                        && r.err().contains(ETCD.secure().endpoint(0)),
                r.err());
    }

    @Test
    void tlsFlagsForHttpEndpointsAreAUsageError() {
        Run r = disco(
                "holders",
                name(),
                "--endpoints=" + ETCD.plain().endpoint(0),
                "--cacert=" + ETCD.tls().caFile());
        assertEquals(ExitCode.USAGE, r.code(), r.err());
        assertTrue(r.err().contains(ETCD.plain().endpoint(0)) && r.err().contains("https://"), r.err());
    }
}

package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.provider.etcd.EtcdServerVersion.MemberVersion;
import io.disco.provider.etcd.EtcdServerVersion.Verdict;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Against the real etcd the suite runs on (Debian bookworm's 3.4.23 under {@code ./test}; 3.5 when
 * {@code DISCO_ETCD_BINARY} points at one): the provider reads the member's version once per jetcd client,
 * in the background, and logs one warning per client when the version has the lease bug of etcd issues
 * 15247 and 12528 (3.4 before 3.4.31, 3.5 before 3.5.13), none when it has the fix (issue 44, item B).
 * The provider logs through SLF4J; the tests' binding (slf4j-simple) writes to {@code System.err}, which
 * is captured here.
 */
class ServerVersionWarningTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final String MARK = "etcd issues 15247 and 12528";

    @Test
    void oneWarningPerClientForAVersionWithTheLeaseBug() throws Exception {
        String version;
        try (Client plain = Etcd.client(ETCD.cluster())) {
            version = plain.getMaintenanceClient()
                    .statusMember(ETCD.cluster().endpoint(0))
                    .get(10, TimeUnit.SECONDS)
                    .getVersion();
        }
        boolean affected = EtcdServerVersion.of(version) == Verdict.AFFECTED;
        System.out.println("etcd " + version + ": " + EtcdServerVersion.of(version));
        String member = ETCD.cluster().endpoint(0);

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, captured), true, StandardCharsets.UTF_8));
        try {
            EtcdOptions options = Etcd.ttl(5);
            try (Client client = Etcd.client(ETCD.cluster())) {
                // A session, the client's owner, two more sessions and a service on a session of its own: one client.
                try (EtcdSession first = EtcdSession.open(client, options);
                        Disco disco = EtcdProvider.disco(client, options);
                        EtcdSession second = EtcdSession.open(client, options);
                        EtcdSession third = EtcdSession.open(client, options);
                        var lock = EtcdProvider.newLock(client, Etcd.uniquePrefix("version-warning"), options)) {
                    List<MemberVersion> read = EtcdServerVersion.checkOnce(client, Duration.ofSeconds(10))
                            .get(15, TimeUnit.SECONDS);
                    assertEquals(1, read.size(), read.toString());
                    assertEquals(version, read.get(0).version(), read.toString());
                }
                assertEquals(affected ? 1 : 0, warnings(captured, member), log(captured));
            }
            // A second client of the same cluster is checked, and warns, once more.
            try (Client other = Etcd.client(ETCD.cluster());
                    EtcdSession session = EtcdSession.open(other, options)) {
                EtcdServerVersion.checkOnce(other, Duration.ofSeconds(10)).get(15, TimeUnit.SECONDS);
                EtcdSession.open(other, options).close();
            }
            assertEquals(affected ? 2 : 0, warnings(captured, member), log(captured));
        } finally {
            System.setErr(stderr);
        }
        if (affected) {
            String line = log(captured)
                    .lines()
                    .filter(l -> l.contains(MARK))
                    .findFirst()
                    .orElseThrow();
            System.out.println("the warning: " + line);
            assertTrue(line.contains("WARN") && line.contains("runs etcd " + version), line);
            assertTrue(line.contains("3.4.31") && line.contains("3.5.13 or later"), line);
        }
    }

    private static String log(ByteArrayOutputStream captured) {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    private static long warnings(ByteArrayOutputStream captured, String member) {
        return log(captured)
                .lines()
                .filter(l -> l.contains(MARK) && l.contains(member))
                .count();
    }

    /** Writes to the real standard error and to the buffer. */
    private static final class Tee extends OutputStream {
        private final OutputStream out;
        private final ByteArrayOutputStream copy;

        Tee(OutputStream out, ByteArrayOutputStream copy) {
            this.out = out;
            this.copy = copy;
        }

        @Override
        public void write(int b) {
            synchronized (copy) {
                copy.write(b);
            }
            synchronized (this) {
                writeOut(new byte[] {(byte) b}, 0, 1);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (copy) {
                copy.write(b, off, len);
            }
            synchronized (this) {
                writeOut(b, off, len);
            }
        }

        private void writeOut(byte[] b, int off, int len) {
            try {
                out.write(b, off, len);
            } catch (java.io.IOException e) {
                // standard error closed: the copy is what the test reads
            }
        }

        @Override
        public void flush() {
            try {
                out.flush();
            } catch (java.io.IOException e) {
                // as above
            }
        }
    }
}

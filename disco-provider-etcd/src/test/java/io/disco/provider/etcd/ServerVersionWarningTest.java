package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.provider.etcd.EtcdServerVersion.MemberVersion;
import io.disco.provider.etcd.EtcdServerVersion.Verdict;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
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

        CapturedStderr captured = CapturedStderr.start();
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
                assertEquals(affected ? 1 : 0, warnings(captured, member), captured.log());
            }
            // A second client of the same cluster is checked, and warns, once more.
            try (Client other = Etcd.client(ETCD.cluster());
                    EtcdSession session = EtcdSession.open(other, options)) {
                EtcdServerVersion.checkOnce(other, Duration.ofSeconds(10)).get(15, TimeUnit.SECONDS);
                EtcdSession.open(other, options).close();
            }
            assertEquals(affected ? 2 : 0, warnings(captured, member), captured.log());
        } finally {
            captured.close();
        }
        if (affected) {
            String line = captured.log()
                    .lines()
                    .filter(l -> l.contains(MARK))
                    .findFirst()
                    .orElseThrow();
            System.out.println("the warning: " + line);
            assertTrue(line.contains("WARN") && line.contains("runs etcd " + version), line);
            assertTrue(line.contains("3.4.31") && line.contains("3.5.13 or later"), line);
        }
    }

    private static long warnings(CapturedStderr captured, String member) {
        return captured.log()
                .lines()
                .filter(l -> l.contains(MARK) && l.contains(member))
                .count();
    }
}

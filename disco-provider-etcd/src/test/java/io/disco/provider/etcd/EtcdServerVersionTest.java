package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.provider.etcd.EtcdServerVersion.MemberVersion;
import io.disco.provider.etcd.EtcdServerVersion.Verdict;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which etcd versions have the lease bug of etcd issues 15247 and 12528 (issue 44, item B): no etcd needed. */
class EtcdServerVersionTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        // older than 3.4: affected (and never tested)
        "2.3.8, AFFECTED",
        "3.0.17, AFFECTED",
        "3.3.27, AFFECTED",
        // 3.4 before 3.4.31
        "3.4.0, AFFECTED",
        "3.4.23, AFFECTED", // Debian bookworm's etcd-server
        "3.4.30, AFFECTED",
        "3.4.31-rc.0, AFFECTED", // a pre-release of the fixed release counts as before it
        "3.4.31, FIXED",
        "3.4.37, FIXED",
        // 3.5 before 3.5.13
        "3.5.0, AFFECTED",
        "3.5.12, AFFECTED",
        "3.5.13, FIXED",
        "3.5.16, FIXED", // Debian trixie's etcd-server
        "3.5.30, FIXED", // Debian sid's
        // later lines have the fix
        "3.6.0, FIXED",
        "3.6.5, FIXED",
        "3.7.0-alpha.0, FIXED",
        "4.0.0, FIXED",
        // how a version may be written
        "v3.4.23, AFFECTED",
        "' 3.5.16 ', FIXED",
        "3.4.23+dfsg, AFFECTED",
        // not a version
        "'', UNKNOWN",
        "3.4, UNKNOWN",
        "not-a-version, UNKNOWN",
        "3.99999999999.0, UNKNOWN",
    })
    void verdicts(String version, Verdict expected) {
        assertEquals(expected, EtcdServerVersion.of(version), version);
    }

    @Test
    void nullIsUnknown() {
        assertEquals(Verdict.UNKNOWN, EtcdServerVersion.of(null));
    }

    @Test
    void theWarningNamesTheMembersTheIssuesAndWhatToRun() {
        String w = EtcdServerVersion.warning(List.of(
                new MemberVersion("m0 at http://10.0.0.1:2379", "3.4.23", null),
                new MemberVersion("m2 at http://10.0.0.3:2379", "3.5.9", null)));
        assertTrue(w.contains("m0 at http://10.0.0.1:2379 runs etcd 3.4.23"), w);
        assertTrue(w.contains("m2 at http://10.0.0.3:2379 runs etcd 3.5.9"), w);
        assertTrue(w.contains("15247") && w.contains("12528"), w);
        assertTrue(w.contains("3.4.31") && w.contains("3.5.13 or later"), w);
        assertFalse(w.contains("older than 3.4"), w);
        String old = EtcdServerVersion.warning(List.of(new MemberVersion("m0", "3.3.27", null)));
        assertTrue(old.contains("older than 3.4 are not tested"), old);
    }

    @Test
    void aMemberWhoseVersionWasNotReadIsNoReasonToWarn() {
        MemberVersion unread = new MemberVersion("m1", null, "timeout");
        assertEquals(Verdict.UNKNOWN, unread.verdict());
        assertTrue(unread.toString().contains("version not read: timeout"), unread.toString());
    }
}

package io.disco.examples.bootapp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.examples.Verdict;
import io.disco.examples.boot.BootExample;
import io.disco.testservers.EtcdExtension;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The demo's {@code boot/two-instances} scenario, as {@code ./demo} runs it: two processes of this
 * application, the leader frozen with SIGSTOP past its TTL in the middle of a locked request, the other
 * books the order and leads, and the resumed one's late write is answered 409 with a problem detail.
 */
class TwoInstancesTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Test
    void theFrozenLeadersLateWriteIsRejectedWithAProblemDetailWhileTheOtherLeads() throws Exception {
        // written by this module's build (process-test-classes), before the tests run
        String classpath = BootExample.classpath(Path.of("target", "app.classpath"));
        Verdict v = BootExample.run(
                ETCD.cluster().endpoints(), classpath, "/test/examples/boot-two-instances", Duration.ofSeconds(2));
        assertEquals(
                "VERDICT boot/two-instances: frozen leader's late write rejected (409 problem detail), the other"
                        + " instance leads — OK",
                v.line());
    }
}

package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.etcd.jetcd.Client;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every class that registers {@link EtcdExtension#sharedMember()} gets the same member, which outlives each class. */
class SharedMemberTest {

    @RegisterExtension
    static final EtcdExtension FIRST = EtcdExtension.sharedMember();

    @RegisterExtension
    static final EtcdExtension SECOND = EtcdExtension.sharedMember();

    @Test
    void twoRegistrationsShareOneMember() throws Exception {
        EtcdCluster etcd = FIRST.cluster();
        assertSame(etcd, SECOND.cluster());
        assertEquals(1, etcd.size());
        try (Client client = Kv.client(etcd.endpoints())) {
            Kv.put(client, "shared/key", "v", Duration.ofSeconds(5));
        }
    }

    /** A class with its own registration (and its own afterAll, which must not stop the shared member). */
    @Nested
    class AnotherClass {

        @RegisterExtension
        static final EtcdExtension THIRD = EtcdExtension.sharedMember();

        @Test
        void getsTheSameRunningMember() throws Exception {
            assertSame(FIRST.cluster(), THIRD.cluster());
            try (Client client = Kv.client(THIRD.cluster().endpoints())) {
                Kv.put(client, "shared/other", "w", Duration.ofSeconds(5));
            }
        }
    }
}

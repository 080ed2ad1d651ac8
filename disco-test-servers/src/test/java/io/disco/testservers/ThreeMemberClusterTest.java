package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ThreeMemberClusterTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    @Test
    void servesPutAndGetThroughEveryEndpoint(EtcdCluster etcd) throws Exception {
        assertEquals(3, etcd.size());
        assertTrue(etcd.supportsFaults(), etcd::describe);
        assertEquals(3, new HashSet<>(etcd.endpoints()).size(), "distinct endpoints " + etcd.endpoints());
        assertTrue(etcd.describe().startsWith("local etcd 3."), etcd::describe);
        for (int i = 0; i < 3; i++) {
            try (Client client = Kv.client(etcd.endpoint(i))) {
                Kv.put(client, "every-endpoint/" + i, "v" + i, Duration.ofSeconds(5));
            }
        }
        for (int i = 0; i < 3; i++) {
            try (Client client = Kv.client(etcd.endpoint(i))) {
                for (int key = 0; key < 3; key++) {
                    assertEquals("v" + key, Kv.get(client, "every-endpoint/" + key, Duration.ofSeconds(5)));
                }
            }
        }
    }

    @Test
    void killingAnyOneMemberKeepsTheClusterServing(EtcdCluster etcd) throws Exception {
        try (Client client = Kv.client(etcd.endpoints())) {
            Kv.put(client, "kill/before", "x", Duration.ofSeconds(5));
            for (int i = 0; i < 3; i++) {
                long pid = etcd.pids().get(i);
                etcd.kill(i);
                assertFalse(
                        ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "member " + i + " is dead");

                Kv.putEventually(client, "kill/" + i, "without m" + i);
                assertEquals("without m" + i, Kv.getEventually(client, "kill/" + i));
                assertEquals("x", Kv.getEventually(client, "kill/before"));

                etcd.startMember(i);
                assertNotEquals(pid, etcd.pids().get(i));
                try (Client revived = Kv.client(etcd.endpoint(i))) {
                    assertEquals("without m" + i, Kv.getEventually(revived, "kill/" + i), "member " + i + " caught up");
                }
            }
        }
    }

    @Test
    void pausedMemberAnswersNothingUntilResumed(EtcdCluster etcd) throws Exception {
        try (Client onlyPaused = Kv.client(etcd.endpoint(1));
                Client others = Kv.client(List.of(etcd.endpoint(0), etcd.endpoint(2)))) {
            Kv.put(onlyPaused, "pause/before", "1", Duration.ofSeconds(5));
            etcd.pause(1);
            try {
                assertThrows(TimeoutException.class, () -> Kv.get(onlyPaused, "pause/before", Duration.ofSeconds(1)));
                Kv.putEventually(others, "pause/during", "2");
                assertEquals("1", Kv.getEventually(others, "pause/before"));
            } finally {
                etcd.resume(1);
            }
            assertEquals("2", Kv.getEventually(onlyPaused, "pause/during"));
        }
    }

    @Test
    void stopAndStartMemberKeepTheSamePortsAndData(EtcdCluster etcd) throws Exception {
        String endpoint = etcd.endpoint(2);
        etcd.stopMember(2);
        try (Client others = Kv.client(List.of(etcd.endpoint(0), etcd.endpoint(1)))) {
            Kv.putEventually(others, "stop/during", "3");
        }
        etcd.startMember(2);
        assertEquals(endpoint, etcd.endpoint(2));
        try (Client restarted = Kv.client(endpoint)) {
            assertEquals("3", Kv.getEventually(restarted, "stop/during"));
        }
        assertThrows(IllegalStateException.class, () -> etcd.startMember(2), "already running");
    }

    @Nested
    class NestedClass {
        @Test
        void sharesTheClusterOfTheEnclosingClass(EtcdCluster etcd) throws Exception {
            assertSame(ETCD.cluster(), etcd);
            try (Client client = Kv.client(etcd.endpoints())) {
                Kv.put(client, "nested", "ok", Duration.ofSeconds(5));
            }
        }
    }
}

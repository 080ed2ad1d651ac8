package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Client;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SingleMemberClusterTest {

    @Test
    void restartKeepsTheData() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            try (Client client = Kv.client(etcd.endpoints())) {
                Kv.put(client, "restart/key", "kept", Duration.ofSeconds(5));
            }
            long pid = etcd.pids().get(0);
            etcd.restart(0);
            assertNotEquals(pid, etcd.pids().get(0));
            try (Client client = Kv.client(etcd.endpoints())) {
                assertEquals("kept", Kv.getEventually(client, "restart/key"));
            }
        }
    }

    @Test
    void startMemberFailsWithTheLogTailWhenItsPortIsTaken() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            etcd.kill(0);
            int port = URI.create(etcd.endpoint(0)).getPort();
            try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> etcd.startMember(0));
                assertTrue(e.getMessage().contains("address already in use"), e.getMessage());
            }
            etcd.startMember(0);
            try (Client client = Kv.client(etcd.endpoints())) {
                Kv.put(client, "after", "port freed", Duration.ofSeconds(5));
            }
        }
    }

    @Test
    void closeLeavesNoProcessAndNoDataDir() throws Exception {
        EtcdCluster etcd = EtcdCluster.start(3);
        List<Long> pids = etcd.pids();
        Path workDir = etcd.workDir();
        assertTrue(Files.isDirectory(workDir));
        etcd.pause(1); // SIGKILL must end a stopped process too
        etcd.kill(2);

        etcd.close();

        for (long pid : pids) {
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid + " still alive");
        }
        assertFalse(Files.exists(workDir), workDir + " still exists");
        etcd.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> etcd.kill(0));
    }
}

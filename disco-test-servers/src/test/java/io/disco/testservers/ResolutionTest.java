package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Client;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResolutionTest {

    @Test
    void missingBinaryFailsWithInstallInstructions() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> EtcdCluster.start(1, Map.of(EtcdCluster.ENV_BINARY, "/nonexistent/etcd")));
        assertTrue(e.getMessage().contains("/nonexistent/etcd"), e.getMessage());
        assertTrue(e.getMessage().contains("apt-get install etcd-server"), e.getMessage());
    }

    @Test
    void binaryThatIsNotEtcdIsRejected() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> EtcdCluster.start(1, Map.of(EtcdCluster.ENV_BINARY, "/bin/true")));
        assertTrue(e.getMessage().contains("does not look like etcd"), e.getMessage());
    }

    @Test
    void theVersionAndPathOfTheBinaryAreAnnouncedOnce(@TempDir Path dir) throws Exception {
        Path real = EtcdBinary.find(System.getenv());
        Path binary = Files.createSymbolicLink(dir.resolve("etcd"), real.toRealPath());
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        String first;
        String second;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            first = EtcdBinary.version(binary);
            second = EtcdBinary.version(binary);
        } finally {
            System.setErr(stderr);
        }
        assertTrue(first.matches("etcd \\d+\\.\\d+\\.\\d+"), first);
        assertEquals(first, second);
        assertEquals(
                "disco-test-servers: " + first + " at " + binary.toAbsolutePath() + System.lineSeparator(),
                captured.toString(StandardCharsets.UTF_8));
    }

    @Test
    void atLeastOneMember() {
        assertThrows(IllegalArgumentException.class, () -> EtcdCluster.start(0, Map.of()));
    }

    @Test
    void endpointsSelectAnExternalClusterWithoutFaults() throws Exception {
        try (EtcdCluster real = EtcdCluster.start(1)) {
            EtcdCluster external = EtcdCluster.start(
                    3,
                    Map.of(
                            EtcdCluster.ENV_ENDPOINTS,
                            " " + real.endpoint(0) + " ,",
                            EtcdCluster.ENV_BINARY,
                            "/nonexistent"));
            assertEquals(List.of(real.endpoint(0)), external.endpoints());
            assertFalse(external.supportsFaults());
            assertTrue(external.describe().contains("external"), external.describe());
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> external.kill(0));
            assertTrue(e.getMessage().contains(EtcdCluster.ENV_ENDPOINTS), e.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> external.pause(0));
            assertThrows(UnsupportedOperationException.class, () -> external.restart(0));

            external.close();

            try (Client client = Kv.client(real.endpoints())) {
                Kv.putEventually(
                        client,
                        "external",
                        "still running"); // a new client's first put may outlast 5 s on loaded cores
            }
        }
    }
}

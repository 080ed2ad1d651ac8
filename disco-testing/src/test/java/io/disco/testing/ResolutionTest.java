package io.disco.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Client;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResolutionTest {

    @Test
    void missingBinaryFailsWithInstallInstructions() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> EtcdCluster.start(1, Map.of(EtcdCluster.ENV_BINARY, "/nonexistent/etcd")));
        assertTrue(e.getMessage().contains("/nonexistent/etcd"), e.getMessage());
        assertTrue(e.getMessage().contains("apt-get install etcd-server"), e.getMessage());
    }

    @Test
    void binaryThatIsNotEtcdIsRejected() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> EtcdCluster.start(1, Map.of(EtcdCluster.ENV_BINARY, "/bin/true")));
        assertTrue(e.getMessage().contains("does not look like etcd"), e.getMessage());
    }

    @Test
    void atLeastOneMember() {
        assertThrows(IllegalArgumentException.class, () -> EtcdCluster.start(0, Map.of()));
    }

    @Test
    void endpointsSelectAnExternalClusterWithoutFaults() throws Exception {
        try (EtcdCluster real = EtcdCluster.start(1)) {
            EtcdCluster external = EtcdCluster.start(3,
                    Map.of(EtcdCluster.ENV_ENDPOINTS, " " + real.endpoint(0) + " ,", EtcdCluster.ENV_BINARY, "/nonexistent"));
            assertEquals(List.of(real.endpoint(0)), external.endpoints());
            assertFalse(external.supportsFaults());
            assertTrue(external.describe().contains("external"), external.describe());
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> external.kill(0));
            assertTrue(e.getMessage().contains(EtcdCluster.ENV_ENDPOINTS), e.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> external.pause(0));
            assertThrows(UnsupportedOperationException.class, () -> external.restart(0));

            external.close();

            try (Client client = Kv.client(real.endpoints())) {
                Kv.putEventually(client, "external", "still running"); // a new client's first put may outlast 5 s on loaded cores
            }
        }
    }
}

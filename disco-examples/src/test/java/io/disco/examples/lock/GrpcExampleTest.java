package io.disco.examples.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.Cli;
import io.disco.examples.Verdict;
import io.disco.examples.lock.grpc.client.GrpcClientExample;
import io.disco.examples.lock.grpc.resource.GrpcResource;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GrpcExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private final Client client = Cli.etcdClient(ETCD.cluster().endpoints());

    @AfterEach
    void closeClient() {
        client.close();
    }

    @Test
    void theZombieIsAbortedAndTheLegitimateWritesAreAccepted() throws Exception {
        try (GrpcResource resource = GrpcResource.start(0, client)) {
            LockZombie.Outcome o = GrpcClientExample.run(
                    ETCD.cluster().endpoints(),
                    "127.0.0.1",
                    resource.port(),
                    "/test/examples/grpc",
                    Duration.ofSeconds(2));
            assertNull(o.failure());
            assertEquals("OK", o.writeA().code());
            assertEquals("OK", o.writeB().code());
            assertEquals("ABORTED", o.zombieWrite().code());
            assertFalse(o.zombieWrite().accepted());
            assertTrue(o.tokenB().isNewerThan(o.tokenA()), o.tokenA() + " then " + o.tokenB());
            assertEquals(o.tokenB(), resource.guard().highWater().orElseThrow());
            assertEquals(
                    "VERDICT lock/grpc: zombie write rejected (ABORTED) — OK",
                    o.verdict().line());
        }
    }

    @Test
    void theExampleServerClosesMissingAndMalformedTokensWithInvalidArgument() throws Exception {
        try (GrpcResource resource = GrpcResource.start(0, client)) {
            Verdict v = GrpcResource.selfCheck(resource.port());
            assertTrue(v.ok(), v.line());
            assertTrue(resource.guard().highWater().isEmpty());
        }
    }
}

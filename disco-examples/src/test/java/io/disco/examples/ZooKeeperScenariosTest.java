package io.disco.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.examples.barrier.BarrierExample;
import io.disco.examples.lock.db.DbExample;
import io.disco.examples.semaphore.basic.SemaphoreExample;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scenarios of {@code ./demo --backend zookeeper} on ZooKeeper (the run's shared in-process server): the same
 * verdicts as on etcd, the frozen owner's session expired by the server, the tokens confirmed with
 * {@code ZooKeeperIssuedBound}. A sample (the database with the issued bound, the semaphore), not the whole demo.
 */
class ZooKeeperScenariosTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static DemoBackend backend;

    @BeforeAll
    static void connect() {
        backend = DemoBackend.zooKeeper(ZK.connectString());
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    private static String ns() {
        return "/test/examples/zk-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void theDatabaseRejectsTheZombieAndAForgedToken() {
        DbExample.Result r = DbExample.run(backend, ns() + "/lock/db", Duration.ofSeconds(2));
        assertEquals(
                "VERDICT lock/db: zombie write rejected by the database (0 rows updated), forged token refused"
                        + " (not issued) — OK",
                r.verdict().line());
        assertEquals("written by B", r.finalData());
    }

    @Test
    void theFrozenWorkersSlotGoesToTheWaiter() {
        Verdict v = SemaphoreExample.run(backend, ns() + "/semaphore", Duration.ofSeconds(2));
        assertEquals(
                "VERDICT semaphore/basic: two holders wrote side by side, the frozen worker's write was rejected"
                        + " on its reassigned slot — OK",
                v.line());
    }

    @Test
    void theWorkersWaitForTheMigrationAndTheBatchGathersAndDispersesTogether() {
        Verdict v = BarrierExample.run(backend, ns() + "/barrier");
        assertEquals(
                "VERDICT barrier/basic: no worker started before the migrator lowered the barrier; the double barrier"
                        + " let the three in only once the third entered and out only once the last left — OK",
                v.line());
    }

    @Test
    void aScenarioThatDoesNotApplySaysSo() {
        assertEquals(
                "VERDICT boot/two-instances: not applicable on ZooKeeper: etcd only — N/A",
                Verdict.notApplicable("boot/two-instances", "not applicable on ZooKeeper: etcd only")
                        .line());
    }
}

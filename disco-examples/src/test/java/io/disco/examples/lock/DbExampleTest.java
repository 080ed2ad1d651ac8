package io.disco.examples.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.lock.db.DbExample;
import io.disco.testing.EtcdExtension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class DbExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void theDatabaseRejectsTheZombieAndKeepsBsWrite() {
        DbExample.Result r = DbExample.run(ETCD.cluster().endpoints(), "/test/examples/db", Duration.ofSeconds(2));
        LockZombie.Outcome o = r.zombie();
        assertNull(o.failure());
        assertTrue(o.writeA().accepted(), o.writeA().detail());
        assertTrue(o.writeB().accepted(), o.writeB().detail());
        assertFalse(o.zombieWrite().accepted(), o.zombieWrite().detail());
        assertTrue(o.tokenB().isNewerThan(o.tokenA()), o.tokenA() + " then " + o.tokenB());
        assertEquals("written by B", r.finalData());
        assertEquals(o.tokenB().value(), r.finalToken());
        assertEquals(List.of(o.tokenA().value() + ":written by A", o.tokenB().value() + ":written by B"), r.history());
        assertTrue(r.verdict().ok(), r.verdict().line());
        assertEquals("VERDICT lock/db: zombie write rejected by the database (0 rows updated) — OK", r.verdict().line());
    }
}

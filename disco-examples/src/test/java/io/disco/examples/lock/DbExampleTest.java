package io.disco.examples.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.lock.db.DbExample;
import io.disco.testservers.EtcdExtension;
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
        assertFalse(r.forgedWrite().accepted(), r.forgedWrite().detail());
        assertEquals("not issued", r.forgedWrite().code());
        assertEquals(
                "VERDICT lock/db: zombie write rejected by the database (0 rows updated), forged token refused"
                        + " (not issued) — OK",
                r.verdict().line());
    }

    @Test
    void theStatementItselfRefusesATokenAboveTheBoundItIsGiven() throws Exception {
        try (java.sql.Connection c =
                        java.sql.DriverManager.getConnection("jdbc:h2:mem:bound-" + java.util.UUID.randomUUID());
                java.sql.Statement st = c.createStatement()) {
            st.execute(
                    "CREATE TABLE resource (id INT PRIMARY KEY, data VARCHAR(200) NOT NULL, fence_token BIGINT NOT NULL)");
            st.execute("INSERT INTO resource (id, data, fence_token) VALUES (1, 'initial', 5)");
            assertEquals(0, update(c, 11, 10), "token 11 above the bound 10: 0 rows");
            assertEquals(0, update(c, 4, 10), "token 4 below the stored 5: 0 rows");
            assertEquals(1, update(c, 10, 10), "token 10 at the bound: written");
        }
    }

    private static int update(java.sql.Connection c, long token, long bound) throws Exception {
        try (java.sql.PreparedStatement up = c.prepareStatement(DbExample.FENCED_UPDATE)) {
            up.setString(1, "by " + token);
            up.setLong(2, token);
            up.setLong(3, token);
            up.setLong(4, token);
            up.setLong(5, bound);
            return up.executeUpdate();
        }
    }
}

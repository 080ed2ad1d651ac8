package io.disco.jdbc;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.testservers.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The measurement behind docs/jdbc.md's table, run on demand (its name is no test's, so {@code mvn verify}
 * leaves it out): two writers with tokens 20 and 21 started together on a missing row and on an existing
 * one (token 0), on H2 and on a real PostgreSQL, per isolation level, in a transaction of their own (committed
 * after a random 0-1 ms) and in auto-commit, each once without and once with {@link RetryingTransaction}.
 * Prints per case how often each outcome happened ("ok", "stale", an SQLState and whether the helper or the
 * database raised it) and the row's final token. Three threads burn CPU meanwhile (a loaded CI machine: the
 * race windows are wider).
 *
 * <pre>
 * mvn -B -pl disco-jdbc verify -Djavadoc.skip=true -Dtest=JdbcRaceMeasurement -Dsurefire.failIfNoSpecifiedTests=false -Draces=300
 * </pre>
 */
@Timeout(value = 60, unit = TimeUnit.MINUTES)
class JdbcRaceMeasurement {

    @RegisterExtension
    static final PostgresExtension PG = PostgresExtension.shared();

    private static final int RACES = Integer.getInteger("races", 200);
    private static final int[] LEVELS = {
        Connection.TRANSACTION_READ_UNCOMMITTED,
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
    };
    private static final String[] LEVEL_NAMES = {"READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"
    };

    static String outcome(Throwable e) {
        if (e == null) {
            return "ok";
        }
        if (e instanceof TokenStaleException) {
            return "stale";
        }
        if (e instanceof SQLException s) {
            String m = String.valueOf(s.getMessage());
            return s.getSQLState() + (m.startsWith("the fenced") ? " (helper)" : " (database)");
        }
        return e.getClass().getSimpleName();
    }

    void measure(String db, DataSource ds) throws Exception {
        String table = "race_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table
                    + " (id BIGINT PRIMARY KEY, data VARCHAR(100), fence_token BIGINT NOT NULL)");
        }
        FencedTable fenced = FencedTable.of(table, "id", "fence_token");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Thread[] burners = new Thread[3];
        for (int i = 0; i < burners.length; i++) {
            burners[i] = new Thread(() -> {
                long x = 0;
                while (!Thread.currentThread().isInterrupted()) {
                    x += System.nanoTime() % 7;
                }
            });
            burners[i].setDaemon(true);
            burners[i].start();
        }
        long[] id = {0};
        try {
            for (boolean existing : new boolean[] {false, true}) {
                for (boolean autoCommit : new boolean[] {false, true}) {
                    for (boolean retrying : autoCommit ? new boolean[] {false} : new boolean[] {false, true}) {
                        for (int l = 0; l < LEVELS.length; l++) {
                            int level = LEVELS[l];
                            Map<String, Integer> counts = new TreeMap<>();
                            long start = System.nanoTime();
                            for (int race = 0; race < RACES; race++) {
                                long row = ++id[0];
                                if (existing) {
                                    try (Connection c = ds.getConnection();
                                            Statement st = c.createStatement()) {
                                        st.execute("INSERT INTO " + table + " VALUES (" + row + ", 'initial', 0)");
                                    }
                                }
                                CyclicBarrier together = new CyclicBarrier(2);
                                @SuppressWarnings("unchecked")
                                Future<String>[] writers = new Future[2];
                                for (int w = 0; w < 2; w++) {
                                    FencingToken token = FencingToken.of(20 + w);
                                    writers[w] = pool.submit(() -> {
                                        together.await(10, TimeUnit.SECONDS);
                                        try {
                                            RetryingTransaction.Work<Void> work = c -> {
                                                if (existing) {
                                                    fenced.update(c, row, token, Map.of("data", "t" + token));
                                                } else {
                                                    fenced.insertOrAdvance(c, row, token, Map.of("data", "t" + token));
                                                }
                                                return null;
                                            };
                                            if (retrying) {
                                                RetryingTransaction.run(ds, level, work);
                                                return "ok";
                                            }
                                            try (Connection c = ds.getConnection()) {
                                                c.setTransactionIsolation(level);
                                                c.setAutoCommit(autoCommit);
                                                try {
                                                    work.run(c);
                                                    if (!autoCommit) {
                                                        if (ThreadLocalRandom.current()
                                                                .nextBoolean()) {
                                                            Thread.sleep(1);
                                                        }
                                                        c.commit();
                                                    }
                                                    return "ok";
                                                } catch (SQLException | RuntimeException e) {
                                                    if (!autoCommit) {
                                                        c.rollback();
                                                    }
                                                    throw e;
                                                }
                                            }
                                        } catch (Exception e) {
                                            return outcome(e);
                                        }
                                    });
                                }
                                String key = "20 " + writers[0].get(60, TimeUnit.SECONDS) + ", 21 "
                                        + writers[1].get(60, TimeUnit.SECONDS);
                                try (Connection c = ds.getConnection();
                                        Statement st = c.createStatement();
                                        ResultSet rs = st.executeQuery(
                                                "SELECT fence_token FROM " + table + " WHERE id = " + row)) {
                                    key += ", row " + (rs.next() ? rs.getLong(1) : "none");
                                }
                                counts.merge(key, 1, Integer::sum);
                            }
                            System.out.printf(
                                    "RACE %s | %s row | %s | %s | %s | %s (%d ms)%n",
                                    db,
                                    existing ? "existing" : "missing",
                                    LEVEL_NAMES[l],
                                    autoCommit ? "auto-commit" : "transaction",
                                    retrying ? "RetryingTransaction" : "no retry",
                                    counts,
                                    (System.nanoTime() - start) / 1_000_000);
                        }
                    }
                }
            }
        } finally {
            for (Thread t : burners) {
                t.interrupt();
            }
            pool.shutdownNow();
        }
    }

    @Test
    void h2() throws Exception {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:race-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000");
        measure("H2", h2);
    }

    @Test
    void postgres() throws Exception {
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setUrl(PG.server().jdbcUrl());
        pg.setUser(PG.server().user());
        measure("PostgreSQL", pg);
    }
}

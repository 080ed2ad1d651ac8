package io.disco.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The fenced writes on one database: the rules, then two writers racing with different tokens under
 * READ COMMITTED and SERIALIZABLE (forced into the bad order, where the newer writer holds the row when
 * the older one writes, and free), through plain JDBC and Spring's JdbcClient.
 */
abstract class FencedWritesContract {

    /** @return a data source of the database under test */
    abstract DataSource dataSource();

    /** @return how many sessions of the database wait for a lock now */
    abstract int blockedSessions(Connection c) throws SQLException;

    String tableName;
    FencedTable table;
    ExecutorService writers;

    @BeforeEach
    void createTable() throws SQLException {
        tableName = "fenced_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + tableName + " (id BIGINT PRIMARY KEY, data VARCHAR(100), fence_token BIGINT NOT NULL)");
            st.execute("INSERT INTO " + tableName + " (id, data, fence_token) VALUES (1, 'initial', 0)");
        }
        table = FencedTable.of(tableName, "id", "fence_token");
        writers = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void dropTable() throws SQLException {
        writers.shutdownNow();
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + tableName);
        }
    }

    static FencingToken t(long value) {
        return FencingToken.of(value);
    }

    /** {data, token} of row {@code id}, or null. */
    Object[] row(long id) throws SQLException {
        try (Connection c = dataSource().getConnection();
             PreparedStatement st = c.prepareStatement("SELECT data, fence_token FROM " + tableName + " WHERE id = ?")) {
            st.setLong(1, id);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? new Object[] {rs.getString(1), rs.getLong(2)} : null;
            }
        }
    }

    void assertRow(long id, String data, long token) throws SQLException {
        Object[] row = row(id);
        assertEquals(data, row[0], "data of row " + id);
        assertEquals(token, row[1], "token of row " + id);
    }

    @Test
    void updateWritesWithAnEqualOrHigherTokenAndRejectsALowerOne() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            table.update(c, 1L, t(5), Map.of("data", "five"));
            assertRow(1, "five", 5);
            table.update(c, 1L, t(5), Map.of("data", "five again"));
            assertRow(1, "five again", 5);
            TokenStaleException stale = assertThrows(TokenStaleException.class,
                    () -> table.update(c, 1L, t(4), Map.of("data", "four")));
            assertEquals(t(4), stale.token());
            assertEquals(t(5), stale.highWater());
            assertRow(1, "five again", 5);
            table.update(c, 1L, t(9), Map.of());
            assertRow(1, "five again", 9);
            assertThrows(NoSuchElementException.class, () -> table.update(c, 2L, t(9), Map.of("data", "x")));
            assertThrows(IllegalArgumentException.class, () -> table.update(c, 1L, t(9), Map.of("fence_token", 1)));
            assertThrows(IllegalArgumentException.class, () -> table.update(c, 1L, t(9), Map.of("data; DROP", 1)));
        }
    }

    @Test
    void insertOrAdvanceInsertsThenAdvancesAndRejectsALowerToken() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            table.insertOrAdvance(c, 7L, t(3), Map.of("data", "three"));
            assertRow(7, "three", 3);
            table.insertOrAdvance(c, 7L, t(8), Map.of("data", "eight"));
            assertRow(7, "eight", 8);
            TokenStaleException stale = assertThrows(TokenStaleException.class,
                    () -> table.insertOrAdvance(c, 7L, t(6), Map.of("data", "six")));
            assertEquals(t(8), stale.highWater());
            assertRow(7, "eight", 8);
        }
    }

    /**
     * The newer writer holds the row (its update done, not committed) when the older one writes: the older
     * waits for the row lock; the newer commits; the older must lose with TokenStaleException (after a retry
     * of its transaction where the database aborts it for serialization).
     */
    void olderWriterBehindANewerOneLoses(int isolation, boolean insert) throws Exception {
        long id = insert ? 100 : 1;
        try (Connection newer = dataSource().getConnection(); Connection probe = dataSource().getConnection()) {
            newer.setAutoCommit(false);
            newer.setTransactionIsolation(isolation);
            write(newer, insert, id, t(20), "newer");
            Future<?> older = writers.submit(() -> RetryingTransaction.run(dataSource(), isolation, c -> {
                write(c, insert, id, t(10), "older");
                return null;
            }));
            await().atMost(Duration.ofSeconds(10)).until(() -> blockedSessions(probe) > 0);
            newer.commit();
            ExecutionException e = assertThrows(ExecutionException.class, () -> older.get(20, TimeUnit.SECONDS));
            TokenStaleException stale = assertInstanceOf(TokenStaleException.class, e.getCause());
            assertEquals(t(10), stale.token());
            assertEquals(t(20), stale.highWater());
        }
        assertRow(id, "newer", 20);
    }

    /** The older writer holds the row first: it commits, and the newer one then writes over it. */
    void newerWriterBehindAnOlderOneWins(int isolation) throws Exception {
        try (Connection older = dataSource().getConnection(); Connection probe = dataSource().getConnection()) {
            older.setAutoCommit(false);
            older.setTransactionIsolation(isolation);
            table.update(older, 1L, t(10), Map.of("data", "older"));
            Future<?> newer = writers.submit(() -> RetryingTransaction.run(dataSource(), isolation, c -> {
                table.update(c, 1L, t(20), Map.of("data", "newer"));
                return null;
            }));
            await().atMost(Duration.ofSeconds(10)).until(() -> blockedSessions(probe) > 0);
            older.commit();
            newer.get(20, TimeUnit.SECONDS);
        }
        assertRow(1, "newer", 20);
    }

    void write(Connection c, boolean insert, long id, FencingToken token, String data) throws SQLException {
        if (insert) {
            table.insertOrAdvance(c, id, token, Map.of("data", data));
        } else {
            table.update(c, id, token, Map.of("data", data));
        }
    }

    @Test
    void readCommittedOlderUpdateBehindNewerLoses() throws Exception {
        olderWriterBehindANewerOneLoses(Connection.TRANSACTION_READ_COMMITTED, false);
    }

    @Test
    void serializableOlderUpdateBehindNewerLoses() throws Exception {
        olderWriterBehindANewerOneLoses(Connection.TRANSACTION_SERIALIZABLE, false);
    }

    @Test
    void readCommittedOlderFirstInsertBehindNewerLoses() throws Exception {
        olderWriterBehindANewerOneLoses(Connection.TRANSACTION_READ_COMMITTED, true);
    }

    @Test
    void serializableOlderFirstInsertBehindNewerLoses() throws Exception {
        olderWriterBehindANewerOneLoses(Connection.TRANSACTION_SERIALIZABLE, true);
    }

    @Test
    void readCommittedNewerBehindOlderWins() throws Exception {
        newerWriterBehindAnOlderOneWins(Connection.TRANSACTION_READ_COMMITTED);
    }

    @Test
    void serializableNewerBehindOlderWins() throws Exception {
        newerWriterBehindAnOlderOneWins(Connection.TRANSACTION_SERIALIZABLE);
    }

    /**
     * Rounds of two writers started together with tokens 2r and 2r+1 in either order, on the existing row
     * and on a new one: each round ends with the newer writer's data and token, and the older writer either
     * committed before it or lost with TokenStaleException.
     */
    void freeRaces(int isolation) throws Exception {
        for (int round = 1; round <= 6; round++) {
            long older = 2L * round;
            long newer = older + 1;
            long id = round % 2 == 0 ? 1 : 1000 + round; // the existing row, or a first insert
            boolean newerFirst = ThreadLocalRandom.current().nextBoolean();
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<Boolean>> results = new ArrayList<>();
            for (long token : newerFirst ? new long[] {newer, older} : new long[] {older, newer}) {
                results.add(writers.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try {
                        RetryingTransaction.run(dataSource(), isolation, c -> {
                            table.insertOrAdvance(c, id, t(token), Map.of("data", "token " + token));
                            return null;
                        });
                        return true;
                    } catch (TokenStaleException e) {
                        assertEquals(t(token), e.token());
                        assertTrue(token == older && e.highWater().value() == newer, "only the older loses: " + e);
                        return false;
                    }
                }));
            }
            for (Future<Boolean> r : results) {
                r.get(30, TimeUnit.SECONDS);
            }
            assertRow(id, "token " + newer, newer);
        }
    }

    @Test
    void freeRacesReadCommitted() throws Exception {
        freeRaces(Connection.TRANSACTION_READ_COMMITTED);
    }

    @Test
    void freeRacesSerializable() throws Exception {
        freeRaces(Connection.TRANSACTION_SERIALIZABLE);
    }

    @Test
    void theSameWritesThroughJdbcClientInASpringTransaction() throws Exception {
        FencedJdbcClient client = new FencedJdbcClient(JdbcClient.create(dataSource()), table);
        client.update(1L, t(5), Map.of("data", "five"));
        assertRow(1, "five", 5);
        assertEquals(t(5), assertThrows(TokenStaleException.class, () -> client.update(1L, t(4), Map.of("data", "x"))).highWater());
        assertThrows(NoSuchElementException.class, () -> client.update(2L, t(5), Map.of("data", "x")));
        client.insertOrAdvance(2L, t(6), Map.of("data", "six"));
        assertRow(2, "six", 6);

        // in a Spring transaction, an older first insert racing a newer one: the duplicate is undone to a
        // savepoint, the conditional update finds the newer row, the older loses and the transaction goes on
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        try (Connection newer = dataSource().getConnection(); Connection probe = dataSource().getConnection()) {
            newer.setAutoCommit(false);
            table.insertOrAdvance(newer, 3L, t(20), Map.of("data", "newer"));
            Future<String> older = writers.submit(() -> tx.execute(status -> {
                client.insertOrAdvance(4L, t(10), Map.of("data", "same transaction"));
                try {
                    client.insertOrAdvance(3L, t(10), Map.of("data", "older"));
                    return "written";
                } catch (TokenStaleException e) {
                    return "stale, high-water " + e.highWater();
                }
            }));
            await().atMost(Duration.ofSeconds(10)).until(() -> blockedSessions(probe) > 0);
            newer.commit();
            assertEquals("stale, high-water 20", older.get(20, TimeUnit.SECONDS));
        }
        assertRow(3, "newer", 20);
        assertRow(4, "same transaction", 10);
    }
}

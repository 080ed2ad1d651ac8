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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The fenced writes on one database: the rules, then two writers racing with different tokens under
 * READ COMMITTED and SERIALIZABLE (forced into the bad order, where the newer writer holds the row when
 * the older one writes, and free), through plain JDBC and Spring's JdbcClient; then each claim of
 * docs/jdbc.md about a concurrent writer committing between two statements of a write, in the one order
 * that shows it, forced with {@link Interleaving}.
 */
abstract class FencedWritesContract {

    /** @return a data source of the database under test */
    abstract DataSource dataSource();

    /** @return how many sessions of the database wait for a lock now */
    abstract int blockedSessions(Connection c) throws SQLException;

    /** @return the count that {@code countQuery} ({@code SELECT COUNT(*) ...}) answers on {@code c} */
    static int count(Connection c, String countQuery) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(countQuery)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    String tableName;
    FencedTable table;
    ExecutorService writers;

    @BeforeEach
    void createTable() throws SQLException {
        tableName = "fenced_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection c = dataSource().getConnection();
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + tableName
                    + " (id BIGINT PRIMARY KEY, data VARCHAR(100), fence_token BIGINT NOT NULL)");
            st.execute("INSERT INTO " + tableName + " (id, data, fence_token) VALUES (1, 'initial', 0)");
        }
        table = FencedTable.of(tableName, "id", "fence_token");
        writers = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void dropTable() throws SQLException {
        writers.shutdownNow();
        try (Connection c = dataSource().getConnection();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + tableName);
        }
    }

    static FencingToken t(long value) {
        return FencingToken.of(value);
    }

    /** {data, token} of row {@code id}, or null. */
    Object[] row(long id) throws SQLException {
        try (Connection c = dataSource().getConnection();
                PreparedStatement st =
                        c.prepareStatement("SELECT data, fence_token FROM " + tableName + " WHERE id = ?")) {
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
            TokenStaleException stale =
                    assertThrows(TokenStaleException.class, () -> table.update(c, 1L, t(4), Map.of("data", "four")));
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
            TokenStaleException stale = assertThrows(
                    TokenStaleException.class, () -> table.insertOrAdvance(c, 7L, t(6), Map.of("data", "six")));
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
        try (Connection newer = dataSource().getConnection();
                Connection probe = dataSource().getConnection()) {
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

    /**
     * The older writer holds the row first: it commits, and the newer one then writes over it. Under READ
     * COMMITTED in one attempt (it waited for the row lock and re-checked the committed row); under SERIALIZABLE
     * the database aborts the newer writer's first attempt (SQLState 40001: the row changed after its snapshot),
     * and RetryingTransaction's second attempt writes.
     */
    void newerWriterBehindAnOlderOneWins(int isolation) throws Exception {
        List<String> attempts = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Connection older = dataSource().getConnection();
                Connection probe = dataSource().getConnection()) {
            older.setAutoCommit(false);
            older.setTransactionIsolation(isolation);
            table.update(older, 1L, t(10), Map.of("data", "older"));
            Future<?> newer = writers.submit(() -> RetryingTransaction.run(dataSource(), isolation, c -> {
                try {
                    table.update(c, 1L, t(20), Map.of("data", "newer"));
                    attempts.add("written");
                } catch (SQLException e) {
                    attempts.add(e.getSQLState());
                    throw e;
                }
                return null;
            }));
            await().atMost(Duration.ofSeconds(10)).until(() -> blockedSessions(probe) > 0);
            older.commit();
            newer.get(20, TimeUnit.SECONDS);
        }
        assertRow(1, "newer", 20);
        assertEquals(
                isolation == Connection.TRANSACTION_SERIALIZABLE ? List.of("40001", "written") : List.of("written"),
                attempts);
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
        freeRaces(isolation, Mode.RETRYING_TRANSACTION);
    }

    /** How a free race's writer runs its write. */
    enum Mode {
        RETRYING_TRANSACTION,
        PLAIN_TRANSACTION,
        AUTO_COMMIT
    }

    void freeRaces(int isolation, Mode mode) throws Exception {
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
                        RetryingTransaction.Work<Void> work = c -> {
                            table.insertOrAdvance(c, id, t(token), Map.of("data", "token " + token));
                            return null;
                        };
                        if (mode == Mode.RETRYING_TRANSACTION) {
                            RetryingTransaction.run(dataSource(), isolation, work);
                            return true;
                        }
                        try (Connection c = dataSource().getConnection()) {
                            c.setTransactionIsolation(isolation);
                            c.setAutoCommit(mode == Mode.AUTO_COMMIT);
                            try {
                                work.run(c);
                                if (mode == Mode.PLAIN_TRANSACTION) {
                                    c.commit();
                                }
                            } finally {
                                if (mode == Mode.PLAIN_TRANSACTION) {
                                    c.rollback(); // after a commit: nothing left to undo
                                }
                                c.setAutoCommit(true);
                            }
                        }
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

    /** READ COMMITTED needs no retry of the transaction: only the older writer fails, never with 40001. */
    @Test
    void freeRacesReadCommittedInPlainTransactions() throws Exception {
        freeRaces(Connection.TRANSACTION_READ_COMMITTED, Mode.PLAIN_TRANSACTION);
    }

    /** Auto-commit needs none either, at any level: each statement is a transaction of its own. */
    @Test
    void freeRacesInAutoCommitReadCommitted() throws Exception {
        freeRaces(Connection.TRANSACTION_READ_COMMITTED, Mode.AUTO_COMMIT);
    }

    @Test
    void freeRacesInAutoCommitSerializable() throws Exception {
        freeRaces(Connection.TRANSACTION_SERIALIZABLE, Mode.AUTO_COMMIT);
    }

    @Test
    void theSameWritesThroughJdbcClientInASpringTransaction() throws Exception {
        FencedJdbcClient client = new FencedJdbcClient(JdbcClient.create(dataSource()), table);
        client.update(1L, t(5), Map.of("data", "five"));
        assertRow(1, "five", 5);
        assertEquals(
                t(5),
                assertThrows(TokenStaleException.class, () -> client.update(1L, t(4), Map.of("data", "x")))
                        .highWater());
        assertThrows(NoSuchElementException.class, () -> client.update(2L, t(5), Map.of("data", "x")));
        client.insertOrAdvance(2L, t(6), Map.of("data", "six"));
        assertRow(2, "six", 6);

        // in a Spring transaction, an older first insert racing a newer one: the duplicate is undone to a
        // savepoint, the conditional update finds the newer row, the older loses and the transaction goes on
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        try (Connection newer = dataSource().getConnection();
                Connection probe = dataSource().getConnection()) {
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

    // ---- a concurrent writer that commits between two statements of a write, forced with Interleaving

    /** A hook that runs {@code action} once, before the first statement whose SQL starts with {@code prefix}. */
    static Interleaving.Hook once(String prefix, Interleaving.Hook action) {
        AtomicBoolean done = new AtomicBoolean();
        return sql -> {
            if (sql.startsWith(prefix) && done.compareAndSet(false, true)) {
                action.before(sql);
            }
        };
    }

    /** Inserts row {@code id} with {@code token} as a first writer would, and commits it (its own connection, auto-commit). */
    void committedFirstInsert(long id, long token, String data) throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            table.insertOrAdvance(c, id, t(token), Map.of("data", data));
        }
    }

    /**
     * The newer writer's conditional update misses the older writer's first insert (not committed yet), the
     * older commits, and the newer's read then shows the row with token 20, at most its own 21. In auto-commit and
     * under READ COMMITTED each statement sees the commits before it, so the write runs its statements again and
     * writes: the newer writer never fails. Before, it threw SQLState 40001 ("run the transaction again"),
     * which the issue saw on H2 in 3 of 20 free races.
     */
    void newerWriterSeesTheOlderFirstInsertCommitBetweenItsStatements(boolean autoCommit) throws Exception {
        try (Connection older = dataSource().getConnection();
                Connection newer =
                        Interleaving.connection(dataSource().getConnection(), once("SELECT", sql -> older.commit()))) {
            older.setAutoCommit(false);
            older.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            table.insertOrAdvance(older, 100L, t(20), Map.of("data", "older"));
            newer.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            newer.setAutoCommit(autoCommit);
            table.insertOrAdvance(newer, 100L, t(21), Map.of("data", "newer"));
            if (!autoCommit) {
                newer.commit();
                newer.setAutoCommit(true);
            }
        }
        assertRow(100, "newer", 21);
    }

    @Test
    void readCommittedNewerWriterRunsItsStatementsAgainAfterACommitBetweenThem() throws Exception {
        newerWriterSeesTheOlderFirstInsertCommitBetweenItsStatements(false);
    }

    @Test
    void autoCommitNewerWriterRunsItsStatementsAgainAfterACommitBetweenThem() throws Exception {
        newerWriterSeesTheOlderFirstInsertCommitBetweenItsStatements(true);
    }

    /**
     * Under REPEATABLE READ and SERIALIZABLE the newer writer can be the one aborted: the older writer's first
     * insert commits after the newer's snapshot was taken (its first statement), so the newer's insert meets a
     * duplicate key of a row its snapshot does not show. It gets SQLState 40001 (from the helper, or PostgreSQL's
     * own under SERIALIZABLE) and nothing of it is written; RetryingTransaction's second attempt writes.
     */
    void snapshotNewerWriterIsAbortedAndWinsOnTheRetry(int isolation) throws Exception {
        List<String> attempts = java.util.Collections.synchronizedList(new ArrayList<>());
        DataSource hooked =
                Interleaving.dataSource(dataSource(), once("SELECT", sql -> committedFirstInsert(100, 20, "older")));
        RetryingTransaction.run(hooked, isolation, c -> {
            try {
                table.insertOrAdvance(c, 100L, t(21), Map.of("data", "newer"));
                attempts.add("written");
            } catch (SQLException e) {
                attempts.add(e.getSQLState());
                throw e;
            }
            return null;
        });
        assertEquals(List.of("40001", "written"), attempts);
        assertRow(100, "newer", 21);
    }

    @Test
    void repeatableReadNewerWriterIsAbortedAndWinsOnTheRetry() throws Exception {
        snapshotNewerWriterIsAbortedAndWinsOnTheRetry(Connection.TRANSACTION_REPEATABLE_READ);
    }

    @Test
    void serializableNewerWriterIsAbortedAndWinsOnTheRetry() throws Exception {
        snapshotNewerWriterIsAbortedAndWinsOnTheRetry(Connection.TRANSACTION_SERIALIZABLE);
    }

    /**
     * In auto-commit at SERIALIZABLE, the database aborts the single statement of a writer that waited for a row
     * lock (SQLState 40001: PostgreSQL's "could not serialize access due to concurrent update", H2's "Deadlock
     * detected"); nothing was written, and the helper runs it again.
     */
    @Test
    void autoCommitRunsAStatementAbortedForSerializationAgain() throws Exception {
        try (Connection older = dataSource().getConnection();
                Connection newer = dataSource().getConnection();
                Connection probe = dataSource().getConnection()) {
            older.setAutoCommit(false);
            table.update(older, 1L, t(20), Map.of("data", "older"));
            newer.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            Future<?> write = writers.submit(() -> {
                table.update(newer, 1L, t(21), Map.of("data", "newer"));
                return null;
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> blockedSessions(probe) > 0);
            older.commit();
            write.get(20, TimeUnit.SECONDS);
            newer.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        assertRow(1, "newer", 21);
    }

    /**
     * Running the statements again is bounded: a concurrent writer that deletes the row before each of the
     * update's runs and inserts it (token 5) before each read keeps the answer inconsistent; after
     * {@link FencedTable#MAX_ATTEMPTS} runs the write gives up with 40001.
     */
    @Test
    void runningTheStatementsAgainIsBounded() throws Exception {
        AtomicInteger updates = new AtomicInteger();
        try (Connection other = dataSource().getConnection();
                Connection newer = Interleaving.connection(dataSource().getConnection(), sql -> {
                    try (Statement st = other.createStatement()) {
                        if (sql.startsWith("UPDATE")) {
                            updates.incrementAndGet();
                            st.execute("DELETE FROM " + tableName + " WHERE id = 1");
                        } else if (sql.startsWith("SELECT")) {
                            st.execute("INSERT INTO " + tableName + " (id, data, fence_token) VALUES (1, 'other', 5)");
                        }
                    }
                })) {
            newer.setAutoCommit(false);
            newer.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            SQLException e =
                    assertThrows(SQLException.class, () -> table.update(newer, 1L, t(21), Map.of("data", "newer")));
            assertEquals("40001", e.getSQLState(), e.toString());
            assertEquals(FencedTable.MAX_ATTEMPTS, updates.get());
            newer.rollback();
            newer.setAutoCommit(true);
        }
        assertRow(1, "other", 5);
    }

    /**
     * Spring: FencedJdbcClient runs a write's statements again the same way outside a transaction (each statement
     * commits on its own) and in one at READ COMMITTED; in one at SERIALIZABLE the transaction's snapshot cannot
     * show the other commit, and it throws ConcurrencyFailureException: run the transaction again.
     */
    @Test
    void jdbcClientRunsItsStatementsAgainWhereAStatementSeesTheCommitsBeforeIt() throws Exception {
        Integer[] levels = {null, Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_SERIALIZABLE};
        for (int i = 0; i < levels.length; i++) {
            Integer isolation = levels[i];
            long id = 200 + i;
            AtomicReference<Connection> older = new AtomicReference<>();
            DataSource hooked = Interleaving.dataSource(
                    dataSource(), once("SELECT", sql -> older.get().commit()));
            FencedJdbcClient client = new FencedJdbcClient(JdbcClient.create(hooked), table);
            try (Connection first = dataSource().getConnection()) {
                older.set(first);
                first.setAutoCommit(false);
                table.insertOrAdvance(first, id, t(20), Map.of("data", "older"));
                Runnable write = () -> client.insertOrAdvance(id, t(21), Map.of("data", "newer"));
                if (isolation == null) {
                    write.run();
                } else {
                    TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(hooked));
                    tx.setIsolationLevel(isolation);
                    if (isolation == Connection.TRANSACTION_SERIALIZABLE) {
                        assertThrows(
                                ConcurrencyFailureException.class,
                                () -> tx.executeWithoutResult(status -> {
                                    client.update(1L, t(21), Map.of("data", "snapshot")); // the snapshot is taken here
                                    write.run();
                                }));
                        continue;
                    }
                    tx.executeWithoutResult(status -> write.run());
                }
            }
            assertRow(id, "newer", 21);
        }
        assertRow(202, "older", 20);
    }
}

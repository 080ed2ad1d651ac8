package io.disco.jdbc;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Fenced writes to one table: the database rejects a stale fencing token in the very statement that
 * writes, so a holder whose lock was lost (a paused process, a partition) cannot overwrite the work of
 * the holder after it, however late its write arrives. The fence lives in the row, so it holds for every
 * replica of a service that writes to the database: an in-memory guard per replica does not fence a
 * replicated resource.
 *
 * <p>Each fenced row has a token column ({@code BIGINT NOT NULL}, 0 for a row never written under a
 * lock) holding the highest token that wrote it. The two writes:
 * <ul>
 *   <li>{@link #update}: {@code UPDATE t SET c1 = ?, ..., token = ? WHERE id = ? AND token <= ?}. A token
 *       at least the stored one writes (the same holder may write many times); a lower one writes nothing
 *       and is reported as {@link TokenStaleException} with the row's token as its high-water mark.</li>
 *   <li>{@link #insertOrAdvance}: the same update, and if there is no row yet, an insert of it with the
 *       token; a concurrent first insert of the same id (a duplicate key) is undone to a savepoint and
 *       the conditional update tried again, so exactly one of two racing writers' rows stands, and it is
 *       the one with the higher token whatever the order of commits. The id column must be unique.</li>
 * </ul>
 *
 * <pre>{@code
 * FencedTable orders = FencedTable.of("orders", "id", "fence_token");
 * lock.lock();
 * try {
 *     orders.update(connection, 42, lock.token(), Map.of("status", "PAID"));
 * } catch (TokenStaleException e) {
 *     // a later holder has written the row: this one's lock was lost; nothing was written
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <h2>Transactions</h2>
 * The methods taking a {@link Connection} run in the caller's transaction (or in auto-commit), and never
 * commit or roll back except to their own savepoint. A write is a few statements (the conditional update;
 * if it wrote nothing, a read of the row's token; for {@link #insertOrAdvance}, the insert), and a
 * concurrent writer can commit between two of them: the update missed a row that the read then shows with
 * a token at most this writer's (the other writer's first insert, committed in between), or the insert
 * met a duplicate key of a row the read does not show.
 * <ul>
 *   <li>In auto-commit, and under READ COMMITTED (or READ UNCOMMITTED), each statement sees what was
 *       committed before it starts, so the write runs its statements again, at most {@link #MAX_ATTEMPTS}
 *       times in all, and ends as the rows say: written, or {@link TokenStaleException}. Only the older of
 *       two racing writers fails. In auto-commit a serialization failure or deadlock of the database
 *       (SQLState class 40; PostgreSQL raises 40001 for a single statement under REPEATABLE READ or
 *       SERIALIZABLE) wrote nothing either, and is run again the same way.</li>
 *   <li>Under REPEATABLE READ or SERIALIZABLE in a transaction, the transaction's snapshot cannot show the
 *       other writer's commit: the write throws {@link SQLTransactionRollbackException} (SQLState 40001),
 *       or the database aborts the transaction itself (40001; H2 calls it a deadlock). Either writer may
 *       be aborted, the newer one too: roll back and run the transaction again, as
 *       {@link RetryingTransaction} does; the retry writes, or reports the stale token.</li>
 * </ul>
 * {@link FencedJdbcClient} offers the same writes through Spring's {@code JdbcClient}.
 *
 * <p>What this does not do: check that a token was ever issued (a forged huge token would lock every
 * holder out; confirm tokens first with the guard's {@code ConfirmedBound}, as the {@code lock/db}
 * example does), or fence writes that do not go through it.
 *
 * <p>Identifiers are checked (letters, digits and {@code _}, the table optionally qualified by a
 * schema) and written into the SQL as given; values are always bound as parameters. Instances are
 * immutable and thread-safe.
 */
public final class FencedTable {

    private static final Pattern COLUMN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
    private static final String SAVEPOINT = "disco_fenced_insert";

    /**
     * How many times one call runs its statements at most, where running them again can help: in
     * auto-commit, or under READ COMMITTED or READ UNCOMMITTED (see <em>Transactions</em> above).
     */
    public static final int MAX_ATTEMPTS = 5;

    private final String table;
    private final String idColumn;
    private final String tokenColumn;

    private FencedTable(String table, String idColumn, String tokenColumn) {
        this.table = table;
        this.idColumn = idColumn;
        this.tokenColumn = tokenColumn;
    }

    /**
     * The fenced writes of {@code table}.
     *
     * @param table the table, optionally {@code schema.table}
     * @param idColumn the column that identifies a row (unique, for {@link #insertOrAdvance})
     * @param tokenColumn the {@code BIGINT} column holding the highest token that wrote the row
     * @return the table's fenced writes
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a name is not a plain identifier, or the two columns are one
     */
    public static FencedTable of(String table, String idColumn, String tokenColumn) {
        check(TABLE, table, "table");
        check(COLUMN, idColumn, "idColumn");
        check(COLUMN, tokenColumn, "tokenColumn");
        if (idColumn.equalsIgnoreCase(tokenColumn)) {
            throw new IllegalArgumentException("idColumn and tokenColumn must differ, both are '" + idColumn + "'");
        }
        return new FencedTable(table, idColumn, tokenColumn);
    }

    private static void check(Pattern pattern, String name, String parameter) {
        Objects.requireNonNull(name, parameter);
        if (!pattern.matcher(name).matches()) {
            throw new IllegalArgumentException(parameter + " must be a plain SQL identifier (letters, digits, '_'"
                    + (pattern == TABLE ? ", optionally schema.table" : "") + "), got '" + name + "'");
        }
    }

    /** @return the checked column names of {@code values}, in its iteration order */
    List<String> columns(Map<String, ?> values) {
        Objects.requireNonNull(values, "values");
        List<String> columns = new ArrayList<>(values.keySet());
        for (String column : columns) {
            check(COLUMN, column, "values' column");
            if (column.equalsIgnoreCase(idColumn) || column.equalsIgnoreCase(tokenColumn)) {
                throw new IllegalArgumentException(
                        "values must not set the id or token column ('" + column + "'): the fenced write sets them");
            }
        }
        return columns;
    }

    /**
     * The conditional update: {@code UPDATE table SET c1 = ?, ..., token = ? WHERE id = ? AND token <= ?};
     * parameters: the values in order, then token, id, token.
     */
    String updateSql(List<String> columns) {
        StringBuilder sql = new StringBuilder("UPDATE ").append(table).append(" SET ");
        for (String column : columns) {
            sql.append(column).append(" = ?, ");
        }
        return sql.append(tokenColumn)
                .append(" = ? WHERE ")
                .append(idColumn)
                .append(" = ? AND ")
                .append(tokenColumn)
                .append(" <= ?")
                .toString();
    }

    /** {@code INSERT INTO table (id, c1, ..., token) VALUES (?, ?, ..., ?)}; parameters: id, the values, token. */
    String insertSql(List<String> columns) {
        StringBuilder sql =
                new StringBuilder("INSERT INTO ").append(table).append(" (").append(idColumn);
        for (String column : columns) {
            sql.append(", ").append(column);
        }
        sql.append(", ").append(tokenColumn).append(") VALUES (?");
        sql.append(", ?".repeat(columns.size()));
        return sql.append(", ?)").toString();
    }

    /** {@code SELECT token FROM table WHERE id = ?}. */
    String selectTokenSql() {
        return "SELECT " + tokenColumn + " FROM " + table + " WHERE " + idColumn + " = ?";
    }

    /**
     * Writes {@code values} to the row {@code id} if {@code token} is at least the row's token, and sets
     * the row's token to {@code token}; in the connection's current transaction.
     *
     * @param connection the connection; its transaction is the caller's
     * @param id the row's id
     * @param token the writer's fencing token
     * @param values the columns to set and their values (may be empty: the token alone advances)
     * @throws TokenStaleException if the row's token is higher: a later holder wrote it; nothing was written
     * @throws NoSuchElementException if there is no row {@code id}
     * @throws SQLTransactionRollbackException (SQLState 40001) if the statement wrote nothing, yet the row
     *         this transaction sees has a token at most {@code token}: a concurrent change this transaction's
     *         snapshot does not see (under REPEATABLE READ or SERIALIZABLE; in auto-commit or under READ
     *         COMMITTED only after {@link #MAX_ATTEMPTS} attempts); run the transaction again
     * @throws SQLException if the database fails (a serialization failure under REPEATABLE READ or
     *         SERIALIZABLE among them: run the transaction again)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a column of {@code values} is not a plain identifier, or is the id
     *         or token column
     */
    public void update(Connection connection, Object id, FencingToken token, Map<String, ?> values)
            throws SQLException {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(token, "token");
        List<String> columns = columns(values);
        attempts(
                connection,
                () -> conditionalUpdate(connection, id, token, columns, values) == 1
                        ? null
                        : rejectedFor(id, token, storedToken(connection, id), false));
    }

    /** One run of a write's statements: null when it wrote, else why not. */
    @FunctionalInterface
    private interface Attempt {
        Exception run() throws SQLException;
    }

    /**
     * Runs {@code attempt} until it writes or fails for good: again (at most {@link #MAX_ATTEMPTS} runs) after
     * an answer that a later statement can change, where a later statement sees later commits.
     */
    private static void attempts(Connection connection, Attempt attempt) throws SQLException {
        for (int n = 1; ; n++) {
            Exception failure;
            try {
                failure = attempt.run();
            } catch (SQLException e) {
                // in auto-commit the failed statement was its own transaction: nothing of this write is left
                if (n < MAX_ATTEMPTS && RetryingTransaction.isRetryable(e) && connection.getAutoCommit()) {
                    continue;
                }
                throw e;
            }
            if (failure == null) {
                return;
            }
            if (!(failure instanceof SQLTransactionRollbackException)
                    || n >= MAX_ATTEMPTS
                    || !statementSnapshots(connection)) {
                if (failure instanceof RuntimeException unchecked) {
                    throw unchecked;
                }
                throw (SQLException) failure;
            }
        }
    }

    /** Whether each statement on {@code connection} sees what was committed before it started. */
    private static boolean statementSnapshots(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            return true;
        }
        int level = connection.getTransactionIsolation();
        return level == Connection.TRANSACTION_READ_COMMITTED || level == Connection.TRANSACTION_READ_UNCOMMITTED;
    }

    /**
     * Writes the row {@code id} with {@code values} and {@code token}: inserts it if there is none, or
     * updates it if {@code token} is at least the row's token; in the connection's current transaction
     * (the insert under a savepoint when the connection is not in auto-commit).
     *
     * @param connection the connection; its transaction is the caller's
     * @param id the row's id (the id column must be unique)
     * @param token the writer's fencing token
     * @param values the other columns to set and their values
     * @throws TokenStaleException if the row exists with a higher token; nothing was written
     * @throws SQLTransactionRollbackException (SQLState 40001) for a concurrent change this transaction
     *         does not see (as {@link #update}, or a row inserted concurrently that its snapshot does not
     *         show; in auto-commit or under READ COMMITTED only after {@link #MAX_ATTEMPTS} attempts); run
     *         the transaction again
     * @throws SQLException if the database fails
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException as {@link #update}
     */
    public void insertOrAdvance(Connection connection, Object id, FencingToken token, Map<String, ?> values)
            throws SQLException {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(token, "token");
        List<String> columns = columns(values);
        attempts(connection, () -> insertOrAdvanceOnce(connection, id, token, columns, values));
    }

    private Exception insertOrAdvanceOnce(
            Connection connection, Object id, FencingToken token, List<String> columns, Map<String, ?> values)
            throws SQLException {
        if (conditionalUpdate(connection, id, token, columns, values) == 1) {
            return null;
        }
        OptionalLong stored = storedToken(connection, id);
        if (stored.isPresent()) {
            return rejectedFor(id, token, stored, false);
        }
        boolean transaction = !connection.getAutoCommit();
        Savepoint savepoint = transaction ? connection.setSavepoint(SAVEPOINT) : null;
        try (PreparedStatement insert = connection.prepareStatement(insertSql(columns))) {
            int i = 1;
            insert.setObject(i++, id);
            for (String column : columns) {
                insert.setObject(i++, values.get(column));
            }
            insert.setLong(i, token.value());
            insert.executeUpdate();
        } catch (SQLException e) {
            if (!isDuplicateKey(e)) {
                throw e;
            }
            // a concurrent writer inserted the row first: undo ours, and advance theirs if ours is newer
            if (savepoint != null) {
                connection.rollback(savepoint);
            }
            if (conditionalUpdate(connection, id, token, columns, values) == 0) {
                return rejectedFor(id, token, storedToken(connection, id), true);
            }
            return null;
        }
        if (savepoint != null) {
            connection.releaseSavepoint(savepoint);
        }
        return null;
    }

    /** SQLState class 23, integrity constraint violation (PostgreSQL 23505, H2 23505). */
    static boolean isDuplicateKey(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("23");
    }

    private int conditionalUpdate(
            Connection connection, Object id, FencingToken token, List<String> columns, Map<String, ?> values)
            throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(updateSql(columns))) {
            int i = 1;
            for (String column : columns) {
                update.setObject(i++, values.get(column));
            }
            update.setLong(i++, token.value());
            update.setObject(i++, id);
            update.setLong(i, token.value());
            int rows = update.executeUpdate();
            if (rows > 1) {
                throw new SQLException("the fenced update of " + table + " matched " + rows + " rows with " + idColumn
                        + " = " + id + ": the id column must be unique");
            }
            return rows;
        }
    }

    private OptionalLong storedToken(Connection connection, Object id) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(selectTokenSql())) {
            select.setObject(1, id);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    /**
     * Why a conditional update wrote nothing, given the row's token as this transaction sees it.
     *
     * @return the exception to throw
     */
    Exception rejectedFor(Object id, FencingToken token, OptionalLong stored, boolean afterDuplicateKey) {
        if (stored.isEmpty() && afterDuplicateKey) {
            return new SQLTransactionRollbackException(
                    "the fenced insert into " + table + " of " + idColumn + " = " + id
                            + " met a duplicate key, yet this transaction sees no such row: a concurrent insert its snapshot does"
                            + " not see; run the transaction again",
                    "40001");
        }
        if (stored.isEmpty()) {
            return new NoSuchElementException("no row in " + table + " with " + idColumn + " = " + id);
        }
        if (stored.getAsLong() > token.value()) {
            return new TokenStaleException(token, FencingToken.of(stored.getAsLong()));
        }
        return new SQLTransactionRollbackException(
                "the fenced write of " + table + " " + idColumn + " = " + id
                        + " with token " + token + " wrote nothing, yet this transaction sees the row's token "
                        + stored.getAsLong() + ": a concurrent change it does not see; run the transaction again",
                "40001");
    }

    @Override
    public String toString() {
        return "FencedTable[" + table + ", id " + idColumn + ", token " + tokenColumn + "]";
    }
}

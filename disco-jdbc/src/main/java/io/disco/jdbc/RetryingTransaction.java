package io.disco.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Runs work in a transaction of its own on a {@link DataSource}, at a given isolation level, and runs it
 * again when the database aborts it for a serialization failure or a deadlock (SQLState class 40, such
 * as PostgreSQL's 40001 under SERIALIZABLE and 40P01, H2's 40001 "Deadlock detected", and
 * {@link FencedTable}'s own 40001 for a concurrent commit its snapshot does not show): what fenced writes under
 * REPEATABLE READ or SERIALIZABLE need, where either of two racing writers can be aborted, the newer one too.
 * The retry sees the committed row: it writes, or reports a stale token as
 * {@link io.disco.fencing.TokenStaleException}. (Under READ COMMITTED and in auto-commit the fenced writes need no
 * retry of the transaction: see {@link FencedTable}.)
 *
 * <pre>{@code
 * RetryingTransaction.run(dataSource, Connection.TRANSACTION_SERIALIZABLE,
 *         c -> { orders.update(c, 42, token, Map.of("status", "PAID")); return null; });
 * }</pre>
 *
 * <p>Any other exception rolls the transaction back and is thrown as it is (a {@code TokenStaleException}
 * among them). The connection is closed (given back to the pool) after every attempt, with its
 * auto-commit and isolation level as it found them. With Spring, a {@code TransactionTemplate} does the
 * same except the retry.
 */
public final class RetryingTransaction {

    /** How many times the work runs at most. */
    public static final int MAX_ATTEMPTS = 10;

    /**
     * The work of one attempt.
     *
     * @param <T> what it returns
     */
    @FunctionalInterface
    public interface Work<T> {
        /**
         * @param connection the attempt's connection, in a transaction: do not commit or close it
         * @return what {@link RetryingTransaction#run} returns
         * @throws SQLException if the database fails
         */
        T run(Connection connection) throws SQLException;
    }

    private RetryingTransaction() {}

    /**
     * Runs {@code work} in a transaction at {@code isolation} and commits it; again, in a new transaction,
     * after a serialization failure or deadlock, at most {@link #MAX_ATTEMPTS} times in all.
     *
     * @param dataSource where the connections come from
     * @param isolation a {@link Connection} {@code TRANSACTION_*} level
     * @param work the work
     * @param <T> what it returns
     * @return what the committed attempt returned
     * @throws SQLException if the database fails, or the last attempt failed for serialization
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code isolation} is not a {@code TRANSACTION_*} level other than NONE
     */
    public static <T> T run(DataSource dataSource, int isolation, Work<T> work) throws SQLException {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(work, "work");
        if (isolation != Connection.TRANSACTION_READ_UNCOMMITTED
                && isolation != Connection.TRANSACTION_READ_COMMITTED
                && isolation != Connection.TRANSACTION_REPEATABLE_READ
                && isolation != Connection.TRANSACTION_SERIALIZABLE) {
            throw new IllegalArgumentException("isolation must be one of Connection's TRANSACTION_* levels other than"
                    + " TRANSACTION_NONE, got " + isolation);
        }
        for (int attempt = 1; ; attempt++) {
            try {
                return once(dataSource, isolation, work);
            } catch (SQLException e) {
                if (!isRetryable(e) || attempt >= MAX_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** SQLState class 40: transaction rollback (serialization failure, deadlock). */
    static boolean isRetryable(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("40");
    }

    private static <T> T once(DataSource dataSource, int isolation, Work<T> work) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            int level = c.getTransactionIsolation();
            c.setAutoCommit(false);
            c.setTransactionIsolation(isolation);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException | Error e) {
                try {
                    c.rollback();
                } catch (SQLException rollback) {
                    e.addSuppressed(rollback);
                }
                throw e;
            } finally {
                c.setTransactionIsolation(level);
                c.setAutoCommit(autoCommit);
            }
        }
    }
}

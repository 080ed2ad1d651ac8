package io.disco.jdbc;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link FencedTable}'s writes through Spring's {@link JdbcClient}: the same statements, in the Spring
 * transaction of the calling thread if there is one (else each statement commits on its own).
 *
 * <pre>{@code
 * FencedJdbcClient orders = new FencedJdbcClient(jdbcClient, FencedTable.of("orders", "id", "fence_token"));
 * orders.update(42, lock.token(), Map.of("status", "PAID"));   // TokenStaleException if a later holder wrote
 * }</pre>
 *
 * <p>Exceptions are Spring's {@code DataAccessException}s, except the rejection itself
 * ({@link TokenStaleException}) and a missing row ({@link NoSuchElementException}). A concurrent writer that
 * commits between two statements of a write is handled as {@link FencedTable} does: outside a Spring
 * transaction (each statement commits on its own), and in one at READ COMMITTED, READ UNCOMMITTED or the
 * database's default level, the write runs its statements again, at most {@link FencedTable#MAX_ATTEMPTS}
 * times (outside a transaction a serialization failure or deadlock of the database too, SQLState class 40). A
 * concurrent change the transaction's snapshot does not see (REPEATABLE READ, SERIALIZABLE) is a
 * {@link ConcurrencyFailureException}: run the transaction again. {@link #insertOrAdvance} undoes a
 * duplicate first insert to a savepoint ({@code SAVEPOINT} SQL, in a Spring transaction) before advancing
 * the row the other writer inserted.
 *
 * <p>Needs {@code spring-jdbc}, an optional dependency of {@code disco-jdbc}. Thread-safe.
 */
public final class FencedJdbcClient {

    private static final String SAVEPOINT = "disco_fenced_insert";

    private final JdbcClient jdbc;
    private final FencedTable table;

    /**
     * @param jdbc the client
     * @param table the table's fenced writes
     * @throws NullPointerException if an argument is null
     */
    public FencedJdbcClient(JdbcClient jdbc, FencedTable table) {
        this.jdbc = Objects.requireNonNull(jdbc, "jdbc");
        this.table = Objects.requireNonNull(table, "table");
    }

    /**
     * As {@link FencedTable#update}: writes {@code values} and {@code token} to the row {@code id} if
     * {@code token} is at least the row's token.
     *
     * @param id the row's id
     * @param token the writer's fencing token
     * @param values the columns to set and their values
     * @throws TokenStaleException if the row's token is higher; nothing was written
     * @throws NoSuchElementException if there is no row {@code id}
     * @throws ConcurrencyFailureException for a concurrent change the transaction does not see
     * @throws org.springframework.dao.DataAccessException if the database fails
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a column of {@code values} is not a plain identifier, or is the
     *         id or token column
     */
    public void update(Object id, FencingToken token, Map<String, ?> values) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(token, "token");
        List<String> columns = table.columns(values);
        attempts(() -> conditionalUpdate(id, token, columns, values) == 1
                ? null
                : rejected(id, token, storedToken(id), false));
    }

    /**
     * Runs {@code attempt} (null when it wrote, else why not) until it writes or fails for good: again, at most
     * {@link FencedTable#MAX_ATTEMPTS} runs, where a later statement sees later commits (see the class comment).
     */
    private static void attempts(Supplier<RuntimeException> attempt) {
        for (int n = 1; ; n++) {
            RuntimeException failure;
            try {
                failure = attempt.get();
            } catch (DataAccessException e) {
                if (n < FencedTable.MAX_ATTEMPTS
                        && !TransactionSynchronizationManager.isActualTransactionActive()
                        && e.getMostSpecificCause() instanceof SQLException sql
                        && RetryingTransaction.isRetryable(sql)) {
                    continue;
                }
                throw e;
            }
            if (failure == null) {
                return;
            }
            if (!(failure instanceof ConcurrencyFailureException)
                    || n >= FencedTable.MAX_ATTEMPTS
                    || !statementSnapshots()) {
                throw failure;
            }
        }
    }

    /** Whether each statement of the calling thread sees what was committed before it started. */
    private static boolean statementSnapshots() {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return true;
        }
        Integer level = TransactionSynchronizationManager.getCurrentTransactionIsolationLevel();
        return level == null
                || level == Connection.TRANSACTION_READ_COMMITTED
                || level == Connection.TRANSACTION_READ_UNCOMMITTED;
    }

    /**
     * As {@link FencedTable#insertOrAdvance}: inserts the row {@code id} with {@code values} and
     * {@code token}, or updates it if {@code token} is at least the row's token.
     *
     * @param id the row's id (the id column must be unique)
     * @param token the writer's fencing token
     * @param values the other columns to set and their values
     * @throws TokenStaleException if the row exists with a higher token; nothing was written
     * @throws ConcurrencyFailureException for a concurrent change the transaction does not see
     * @throws org.springframework.dao.DataAccessException if the database fails
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException as {@link #update}
     */
    public void insertOrAdvance(Object id, FencingToken token, Map<String, ?> values) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(token, "token");
        List<String> columns = table.columns(values);
        attempts(() -> insertOrAdvanceOnce(id, token, columns, values));
    }

    private RuntimeException insertOrAdvanceOnce(
            Object id, FencingToken token, List<String> columns, Map<String, ?> values) {
        if (conditionalUpdate(id, token, columns, values) == 1) {
            return null;
        }
        OptionalLong stored = storedToken(id);
        if (stored.isPresent()) {
            return rejected(id, token, stored, false);
        }
        boolean transaction = TransactionSynchronizationManager.isActualTransactionActive();
        if (transaction) {
            jdbc.sql("SAVEPOINT " + SAVEPOINT).update();
        }
        try {
            var insert = jdbc.sql(table.insertSql(columns)).param(id);
            for (String column : columns) {
                insert = insert.param(values.get(column));
            }
            insert.param(token.value()).update();
        } catch (DuplicateKeyException e) {
            if (transaction) {
                jdbc.sql("ROLLBACK TO SAVEPOINT " + SAVEPOINT).update();
            }
            if (conditionalUpdate(id, token, columns, values) == 0) {
                return rejected(id, token, storedToken(id), true);
            }
            return null;
        }
        if (transaction) {
            jdbc.sql("RELEASE SAVEPOINT " + SAVEPOINT).update();
        }
        return null;
    }

    private int conditionalUpdate(Object id, FencingToken token, List<String> columns, Map<String, ?> values) {
        var update = jdbc.sql(table.updateSql(columns));
        for (String column : columns) {
            update = update.param(values.get(column));
        }
        int rows = update.param(token.value()).param(id).param(token.value()).update();
        if (rows > 1) {
            throw new IllegalStateException("the fenced update of " + table + " matched " + rows + " rows with id " + id
                    + ": the id column must be unique");
        }
        return rows;
    }

    private OptionalLong storedToken(Object id) {
        Optional<Long> stored =
                jdbc.sql(table.selectTokenSql()).param(id).query(Long.class).optional();
        return stored.map(OptionalLong::of).orElseGet(OptionalLong::empty);
    }

    private RuntimeException rejected(Object id, FencingToken token, OptionalLong stored, boolean afterDuplicateKey) {
        Exception e = table.rejectedFor(id, token, stored, afterDuplicateKey);
        if (e instanceof RuntimeException unchecked) {
            return unchecked;
        }
        return new ConcurrencyFailureException(e.getMessage(), e);
    }

    @Override
    public String toString() {
        return "FencedJdbcClient[" + table + "]";
    }
}

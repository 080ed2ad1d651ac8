package io.disco.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeAll;

/** The fenced writes on an in-memory H2 database. */
class H2FencedWritesTest extends FencedWritesContract {

    private static JdbcDataSource h2;

    @BeforeAll
    static void database() {
        h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:fenced-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000");
    }

    @Override
    DataSource dataSource() {
        return h2;
    }

    @Override
    int blockedSessions(Connection c) throws SQLException {
        return count(c, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL");
    }
}

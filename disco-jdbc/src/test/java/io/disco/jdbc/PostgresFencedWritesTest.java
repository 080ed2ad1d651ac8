package io.disco.jdbc;

import io.disco.testservers.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** The fenced writes on a real PostgreSQL server that the test run starts (Debian's postgresql). */
class PostgresFencedWritesTest extends FencedWritesContract {

    @RegisterExtension
    static final PostgresExtension PG = PostgresExtension.shared();

    private static PGSimpleDataSource pg;

    @BeforeAll
    static void database() {
        pg = new PGSimpleDataSource();
        pg.setUrl(PG.server().jdbcUrl());
        pg.setUser(PG.server().user());
    }

    @Override
    DataSource dataSource() {
        return pg;
    }

    @Override
    int blockedSessions(Connection c) throws SQLException {
        return count(c, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    }
}

package io.disco.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.testservers.NullArguments;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;

/** Every public entry point of disco-jdbc refuses a null naming the parameter, and writes nothing. */
class JdbcNullArgumentsTest {

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter() throws Exception {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:nulls-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        try (Connection c = h2.getConnection();
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, data VARCHAR(100), fence_token BIGINT NOT NULL)");
            FencedTable table = FencedTable.of("t", "id", "fence_token");
            Map<Class<?>, Object> samples = new HashMap<>();
            samples.put(Connection.class, c);
            samples.put(DataSource.class, h2);
            samples.put(Object.class, 1L);
            samples.put(FencingToken.class, FencingToken.of(5));
            samples.put(Map.class, Map.of("data", "x"));
            samples.put(FencedTable.class, table);
            samples.put(JdbcClient.class, JdbcClient.create(h2));
            samples.put(RetryingTransaction.Work.class, (RetryingTransaction.Work<Object>) conn -> null);
            NullArguments nulls = new NullArguments(samples, () -> "t");
            for (Class<?> type : List.of(FencedTable.class, RetryingTransaction.class, FencedJdbcClient.class)) {
                nulls.walk(type, null);
            }
            nulls.walk(FencedTable.class, table);
            nulls.walk(FencedJdbcClient.class, new FencedJdbcClient(JdbcClient.create(h2), table));
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 20, nulls.calls() + " calls");
            try (var rows = st.executeQuery("SELECT COUNT(*) FROM t")) {
                rows.next();
                assertEquals(0, rows.getInt(1), "nothing written");
            }
        }
    }
}

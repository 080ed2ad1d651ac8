package io.disco.examples.lock.db;

import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.examples.lock.LockZombie;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.ConfirmedBound;
import io.disco.fencing.guard.TokenNotIssuedException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * {@code lock/db}: the database itself is the guard. The protected row holds its data and the highest
 * fencing token that ever wrote it; a write is one transaction whose conditional
 * {@code UPDATE ... WHERE fence_token <= ?} both checks the token and writes the data, so a stale
 * owner's write updates 0 rows and changes nothing, however late it arrives.
 *
 * <p>A token nobody issued (a forged {@code 9223372036854775807}) would pass {@code fence_token <= ?}
 * and then lock every owner out. So each write first confirms its token with etcd
 * ({@link ConfirmedBound} over the backend's {@link DemoBackend#issuedBound()}, {@code EtcdIssuedBound} on etcd,
 * {@code ZooKeeperIssuedBound} on ZooKeeper: free for a token at most the revision already
 * confirmed, one read of etcd's current revision per new owner otherwise), and the statement carries
 * the confirmed revision as a bound: {@code AND ? <= ?} (token, bound). A token above it is refused
 * before the database is touched; the condition keeps any path that skipped the confirmation from
 * writing a token above the bound it passed. The story ends with such a forged write, refused.
 *
 * <p>The database is a real embedded H2 (in memory), reached through plain JDBC; each owner uses its
 * own connection, as separate processes would.
 *
 * <p>Run: {@code java ... io.disco.examples.lock.db.DbExample [--endpoints host:port]}
 */
public final class DbExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "lock/db";
    /** The lock's etcd prefix. */
    public static final String LOCK_NAME = "/disco/examples/lock/db";

    /**
     * The single conditional update: the token check (not stale: at least the stored token; issued: at
     * most the revision confirmed with etcd) and the data write are one statement. Parameters: data,
     * token, token, token, bound.
     */
    public static final String FENCED_UPDATE =
            "UPDATE resource SET data = ?, fence_token = ? WHERE id = 1 AND fence_token <= ? AND ? <= ?";

    /** The forged token of the story's last write. */
    static final FencingToken FORGED = FencingToken.of(Long.MAX_VALUE);

    /**
     * What happened, with the row as the database finally holds it.
     *
     * @param zombie the zombie story's outcome
     * @param finalData the row's data at the end
     * @param finalToken the row's fence_token at the end
     * @param history the writes the database applied, in order, as {@code token:data}
     * @param forgedWrite the answer to a write with the forged token {@code 2^63-1}, after B's
     */
    public record Result(
            LockZombie.Outcome zombie,
            String finalData,
            long finalToken,
            List<String> history,
            LockZombie.Answer forgedWrite) {

        /**
         * @return the zombie story's verdict, failed also if the row does not hold B's write or the forged
         *     write was accepted
         */
        public Verdict verdict() {
            Verdict v = zombie.verdict();
            if (v.ok()
                    && (!"written by B".equals(finalData)
                            || finalToken != zombie.tokenB().value())) {
                return new Verdict(
                        v.scenario(),
                        false,
                        "the row holds '" + finalData + "' with token " + finalToken + " instead of B's write");
            }
            if (v.ok() && (forgedWrite == null || forgedWrite.accepted())) {
                return new Verdict(
                        v.scenario(),
                        false,
                        "a write with a forged token was " + (forgedWrite == null ? "not tried" : "accepted"));
            }
            return v.ok()
                    ? new Verdict(
                            v.scenario(),
                            true,
                            "zombie write rejected by the database (0 rows updated),"
                                    + " forged token refused (not issued)")
                    : v;
        }
    }

    private DbExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), LOCK_NAME, LockZombie.DEFAULT_ZOMBIE_TTL)
                .verdict()
                .print());
    }

    /**
     * Runs the scenario against a fresh in-memory database, on etcd.
     *
     * @param endpoints etcd client URLs
     * @param lockName the lock's etcd prefix
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static Result run(List<String> endpoints, String lockName, Duration zombieTtl) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, lockName, zombieTtl),
                failure -> new Result(
                        new LockZombie.Outcome(SCENARIO, null, null, null, null, null, failure),
                        null,
                        -1,
                        List.of(),
                        null));
    }

    /**
     * Runs the scenario against a fresh in-memory database, on {@code demo}.
     *
     * @param demo where the owners are opened and the tokens confirmed
     * @param lockName the lock's name
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static Result run(DemoBackend demo, String lockName, Duration zombieTtl) {
        Say say = new Say(SCENARIO);
        String url = "jdbc:h2:mem:disco-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection admin = DriverManager.getConnection(url);
                Connection connA = DriverManager.getConnection(url);
                Connection connB = DriverManager.getConnection(url)) {
            ConfirmedBound bound = ConfirmedBound.of(demo.issuedBound(), Duration.ofSeconds(5));
            try (Statement st = admin.createStatement()) {
                st.execute("CREATE TABLE resource (id INT PRIMARY KEY, data VARCHAR(200) NOT NULL,"
                        + " fence_token BIGINT NOT NULL)");
                st.execute("CREATE TABLE history (seq BIGINT AUTO_INCREMENT PRIMARY KEY,"
                        + " fence_token BIGINT NOT NULL, data VARCHAR(200) NOT NULL)");
                st.execute("INSERT INTO resource (id, data, fence_token) VALUES (1, 'initial', 0)");
            }
            say.step(
                    "H2 database ready: resource(id=1, data='initial', fence_token=0); every write runs %s",
                    FENCED_UPDATE);

            LockZombie.Outcome outcome = LockZombie.run(
                    say,
                    demo,
                    lockName,
                    zombieTtl,
                    (owner, token, data) -> fencedWrite(owner.equals("A") ? connA : connB, bound, token, data));
            LockZombie.Answer forged = fencedWrite(connA, bound, FORGED, "forged");
            say.step("a write with the forged token %s -> %s (%s)", FORGED, forged.code(), forged.detail());

            try (Statement st = admin.createStatement();
                    ResultSet row = st.executeQuery("SELECT data, fence_token FROM resource WHERE id = 1")) {
                row.next();
                String data = row.getString(1);
                long token = row.getLong(2);
                List<String> history = new java.util.ArrayList<>();
                try (ResultSet h = st.getConnection()
                        .createStatement()
                        .executeQuery("SELECT fence_token, data FROM history ORDER BY seq")) {
                    while (h.next()) {
                        history.add(h.getLong(1) + ":" + h.getString(2));
                    }
                }
                say.step("the database holds data='%s', fence_token=%d; applied writes: %s", data, token, history);
                return new Result(outcome, data, token, List.copyOf(history), forged);
            }
        } catch (SQLException e) {
            say.step("database failure: %s", e);
            return new Result(
                    new LockZombie.Outcome(SCENARIO, null, null, null, null, null, "database: " + e),
                    null,
                    -1,
                    List.of(),
                    null);
        }
    }

    /**
     * One fenced write: the token confirmed with etcd, then the conditional update and the history row
     * in one transaction, committed only when the update matched the row.
     */
    static LockZombie.Answer fencedWrite(Connection conn, ConfirmedBound bound, FencingToken token, String data)
            throws SQLException {
        FencingToken confirmed;
        try {
            confirmed = bound.confirm(token);
        } catch (TokenNotIssuedException e) {
            return new LockZombie.Answer(false, "not issued", e.getMessage() + "; the database was not touched");
        } catch (BoundUnavailableException e) {
            return new LockZombie.Answer(false, "unavailable", e.getMessage());
        }
        conn.setAutoCommit(false);
        try {
            int updated;
            try (PreparedStatement up = conn.prepareStatement(FENCED_UPDATE)) {
                up.setString(1, data);
                up.setLong(2, token.value());
                up.setLong(3, token.value());
                up.setLong(4, token.value());
                up.setLong(5, confirmed.value());
                updated = up.executeUpdate();
            }
            if (updated == 0) {
                conn.rollback();
                long stored;
                try (Statement st = conn.createStatement();
                        ResultSet rs = st.executeQuery("SELECT fence_token FROM resource WHERE id = 1")) {
                    rs.next();
                    stored = rs.getLong(1);
                }
                conn.commit();
                return new LockZombie.Answer(
                        false, "0 rows updated", "the row's fence_token is " + stored + ", rolled back");
            }
            try (PreparedStatement hist =
                    conn.prepareStatement("INSERT INTO history (fence_token, data) VALUES (?, ?)")) {
                hist.setLong(1, token.value());
                hist.setString(2, data);
                hist.executeUpdate();
            }
            conn.commit();
            return new LockZombie.Answer(true, updated + " row updated", "committed");
        } catch (SQLException | RuntimeException e) {
            conn.rollback();
            throw e;
        }
    }
}

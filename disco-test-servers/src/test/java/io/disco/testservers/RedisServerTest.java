package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** RedisServer against real redis-server processes: start, data across a kill, freeze, settings, replicas. */
class RedisServerTest {

    @RegisterExtension
    static final RedisExtension SHARED = RedisExtension.sharedServer();

    @Test
    void theSharedServerAnswers() {
        RedisServer server = SHARED.server();
        assertEquals(server.uri(), SHARED.uri());
        assertEquals("OK", server.command("SET", "RedisServerTest:shared", "v"));
        assertEquals("v", server.command("GET", "RedisServerTest:shared"));
        assertThrows(IllegalStateException.class, SHARED::sentinels);
    }

    @Test
    void aKeyWrittenBeforeAKillIsThereAfterTheRestart() {
        try (RedisServer redis = RedisServer.start()) {
            assertEquals("127.0.0.1", redis.host());
            assertNotEquals(6379, redis.port());
            assertEquals("redis://127.0.0.1:" + redis.port(), redis.uri());
            assertEquals("always", redis.config("appendfsync"));
            assertEquals("yes", redis.config("appendonly"));
            assertEquals("", redis.config("save"));
            assertEquals("master", redis.role());
            assertEquals("OK", redis.command("SET", "k", "before the kill"));
            assertEquals(42L, redis.command("INCRBY", "counter", "42"));
            long pid = redis.pid();

            redis.kill();
            assertFalse(redis.isRunning());
            assertThrows(IllegalStateException.class, () -> redis.command("PING"));

            redis.restart();
            assertNotEquals(pid, redis.pid());
            assertEquals("before the kill", redis.command("GET", "k"));
            assertEquals(43L, redis.command("INCR", "counter"));
        }
    }

    @Test
    void aFrozenServerAnswersNothingUntilItIsResumed() {
        try (RedisServer redis = RedisServer.start()) {
            redis.freeze();
            IllegalStateException silent =
                    assertThrows(IllegalStateException.class, () -> redis.command(Duration.ofMillis(300), "PING"));
            assertTrue(silent.getMessage().contains("did not answer PING"), silent.getMessage());
            redis.resume();
            assertEquals("PONG", redis.command("PING"));
        }
    }

    @Test
    void settingsAreReadChangedAndGivenAtStart() {
        try (RedisServer redis = RedisServer.start()) {
            redis.config("appendfsync", "everysec");
            assertEquals("everysec", redis.config("appendfsync"));
            assertNull(redis.config("no-such-setting"));
            IllegalStateException refused =
                    assertThrows(IllegalStateException.class, () -> redis.config("appendfsync", "sometimes"));
            assertTrue(refused.getMessage().startsWith("ERR"), refused.getMessage());
            assertEquals("OK", redis.command("DEBUG", "SLEEP", "0")); // enable-debug-command yes
        }
        try (RedisServer redis = RedisServer.start(Map.of("appendfsync", "everysec"))) {
            assertEquals("everysec", redis.config("appendfsync"));
            assertEquals("yes", redis.config("appendonly"));
        }
    }

    @Test
    void aReplicaCopiesItsPrimary() {
        try (RedisServer primary = RedisServer.start();
                RedisServer replica = RedisServer.startReplicaOf(primary)) {
            assertEquals("slave", replica.role());
            try (Resp connection = Resp.connect(primary.host(), primary.port(), Duration.ofSeconds(10))) {
                connection.call("SET", "k", "v");
                assertEquals(1L, connection.call("WAIT", "1", "5000")); // the connection's writes are on the replica
            }
            assertEquals("v", replica.command("GET", "k"));
        }
    }

    @Test
    void closeStopsTheServerAndDeletesItsData() {
        RedisServer redis = RedisServer.start();
        Path dir = redis.workDir();
        assertTrue(Files.isDirectory(dir));
        redis.close();
        assertFalse(redis.isRunning());
        assertFalse(Files.exists(dir));
        redis.close(); // idempotent
        assertThrows(IllegalStateException.class, redis::restart);
    }

    @Test
    void withoutTheBinariesTheMessageSaysHowToInstallThem(@TempDir Path empty) {
        assertNull(RedisBinary.find("redis-server", empty.toString(), empty));
        assertTrue(RedisBinary.NO_SERVER.contains("apt-get install redis-server"));
        assertTrue(RedisBinary.NO_CLI.contains("apt-get install redis-tools"));
    }
}

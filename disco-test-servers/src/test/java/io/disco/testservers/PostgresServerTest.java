package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where PostgresServer finds PostgreSQL, and the failure that says how to install it (the server itself: disco-jdbc's tests). */
class PostgresServerTest {

    @Test
    void withoutPostgresqlItFailsWithHowToInstallIt(@TempDir Path dir) {
        IllegalStateException none =
                assertThrows(IllegalStateException.class, () -> PostgresServer.binaries(null, dir.resolve("absent")));
        assertTrue(none.getMessage().contains("apt-get install postgresql"), none.getMessage());
        IllegalStateException empty = assertThrows(IllegalStateException.class, () -> PostgresServer.binaries("", dir));
        assertTrue(empty.getMessage().contains("apt-get install postgresql"), empty.getMessage());
        IllegalStateException env =
                assertThrows(IllegalStateException.class, () -> PostgresServer.binaries(dir.toString(), dir));
        assertTrue(env.getMessage().contains("DISCO_PG_BIN"), env.getMessage());
    }

    @Test
    void theNewestDebianVersionIsTaken(@TempDir Path root) throws Exception {
        for (String version : new String[] {"9.6", "15", "13"}) {
            Path bin = Files.createDirectories(root.resolve(version).resolve("bin"));
            for (String tool : new String[] {"initdb", "pg_ctl"}) {
                Files.createFile(bin.resolve(tool)).toFile().setExecutable(true);
            }
        }
        Files.createDirectories(root.resolve("16").resolve("bin")); // a version without its binaries
        assertEquals(root.resolve("15").resolve("bin"), PostgresServer.binaries(null, root));
    }
}

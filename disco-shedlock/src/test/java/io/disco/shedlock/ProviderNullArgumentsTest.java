package io.disco.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.NullArguments;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every public entry point of the provider refuses a null naming the parameter. */
class ProviderNullArgumentsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter() throws Exception {
        try (Disco disco = Etcd.disco(ETCD.client())) {
            String prefix = EtcdClaims.uniquePrefix("shedlock-nulls");
            NullArguments nulls = new NullArguments(
                    Map.of(
                            Disco.class,
                            disco,
                            LockConfiguration.class,
                            new LockConfiguration(Instant.now(), "job", Duration.ofSeconds(1), Duration.ZERO)),
                    () -> prefix + "/" + UUID.randomUUID());
            nulls.walk(DiscoLockProvider.class, null);
            try (DiscoLockProvider provider = new DiscoLockProvider(disco, prefix)) {
                nulls.walk(DiscoLockProvider.class, provider);
            }
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 4, nulls.calls() + " calls");
        }
    }
}

package io.disco.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.testing.EtcdClaims;
import io.disco.testing.EtcdExtension;
import io.disco.testing.NullArguments;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every public entry point of the registry refuses a null naming the parameter. */
class RegistryNullArgumentsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter() throws Exception {
        try (Client client = EtcdClaims.client(ETCD.cluster()); Disco disco = Etcd.disco(client)) {
            String prefix = EtcdClaims.uniquePrefix("registry-nulls");
            Map<Class<?>, Object> samples = new HashMap<>();
            samples.put(Disco.class, disco);
            samples.put(Object.class, "k");
            samples.put(Duration.class, Duration.ofSeconds(1));
            NullArguments nulls = new NullArguments(samples, () -> prefix + "/" + UUID.randomUUID());
            nulls.walk(DiscoLockRegistry.class, null);
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
            nulls.walk(DiscoLockRegistry.class, registry);
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 4, nulls.calls() + " calls");
            assertTrue(EtcdClaims.claims(client, prefix + "/k").isEmpty(), "nothing claimed");
        }
    }
}

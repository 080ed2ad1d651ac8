package io.disco.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.NullArguments;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;

/**
 * Every public entry point of the module refuses a null naming the parameter: the registry's (claiming nothing) and
 * the leader initiator's (campaigning for nothing).
 */
class NullArgumentsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    /** A null walk with {@code samples}, whose strings are names under {@code prefix} no other call uses. */
    private static NullArguments walk(String prefix, Map<Class<?>, Object> samples) {
        return new NullArguments(samples, () -> prefix + "/" + UUID.randomUUID());
    }

    @Test
    void theRegistryRejectsNullNamingTheParameter() throws Exception {
        try (Disco disco = Etcd.disco(ETCD.client())) {
            String prefix = EtcdClaims.uniquePrefix("registry-nulls");
            NullArguments nulls =
                    walk(prefix, Map.of(Disco.class, disco, Object.class, "k", Duration.class, Duration.ofSeconds(1)));
            nulls.walk(DiscoLockRegistry.class, null);
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
            nulls.walk(DiscoLockRegistry.class, registry);
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 4, nulls.calls() + " calls");
            assertTrue(EtcdClaims.claims(ETCD.client(), prefix + "/k").isEmpty(), "nothing claimed");
        }
    }

    @Test
    void theLeaderInitiatorRejectsNullNamingTheParameter() throws Exception {
        try (Disco disco = Etcd.disco(ETCD.client())) {
            String prefix = EtcdClaims.uniquePrefix("initiator-nulls");
            NullArguments nulls = walk(
                            prefix,
                            Map.of(
                                    Disco.class,
                                    disco,
                                    Candidate.class,
                                    new DefaultCandidate("id", "role"),
                                    ApplicationEventPublisher.class,
                                    (ApplicationEventPublisher) event -> {}))
                    .skipMethods(Set.of("start", "stop"));
            nulls.walk(DiscoLeaderInitiator.class, null);
            nulls.walk(DiscoLeaderInitiator.class, new DiscoLeaderInitiator(disco, prefix + "/e", "role"));
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 7, nulls.calls() + " calls");
        }
    }
}

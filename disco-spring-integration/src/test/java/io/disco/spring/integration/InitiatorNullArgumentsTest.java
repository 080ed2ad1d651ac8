package io.disco.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.testing.EtcdClaims;
import io.disco.testing.EtcdExtension;
import io.disco.testing.NullArguments;
import io.etcd.jetcd.Client;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;

/** Every public entry point of the leader initiator refuses a null naming the parameter; nothing campaigns. */
class InitiatorNullArgumentsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter() throws Exception {
        try (Client client = EtcdClaims.client(ETCD.cluster()); Disco disco = Etcd.disco(client)) {
            String prefix = EtcdClaims.uniquePrefix("initiator-nulls");
            Map<Class<?>, Object> samples = new HashMap<>();
            samples.put(Disco.class, disco);
            samples.put(Candidate.class, new DefaultCandidate("id", "role"));
            samples.put(ApplicationEventPublisher.class, (ApplicationEventPublisher) event -> { });
            NullArguments nulls = new NullArguments(samples, () -> prefix + "/" + UUID.randomUUID())
                    .skipMethods(java.util.Set.of("start", "stop"));
            nulls.walk(DiscoLeaderInitiator.class, null);
            nulls.walk(DiscoLeaderInitiator.class, new DiscoLeaderInitiator(disco, prefix + "/e", "role"));
            assertEquals(List.of(), nulls.problems());
            assertTrue(nulls.calls() >= 7, nulls.calls() + " calls");
        }
    }
}

package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An observation survives a broken watch: etcd crashes and comes back, and the next change still arrives. */
class ElectionObserveRestartTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void observationCarriesOnAfterEtcdRestarts() throws Exception {
        String prefix = uniquePrefix("election-observe-restart");
        BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
        try (Client client = Etcd.client(ETCD.cluster());
                ElectionService leader = EtcdProvider.newElection(client, prefix, ttl(15));
                ElectionService observer = EtcdProvider.newElection(client, prefix, ttl(15));
                Observation ignored = observer.observe(seen::add)) {
            Leadership l = leader.campaign("v1");
            assertEquals(l, seen.poll(5, SECONDS));

            ETCD.cluster().restart(0); // the watch stream breaks; the data (and the lease) survive

            Leadership l2 = leader.proclaim("v2");
            assertEquals(l2, seen.poll(10, SECONDS));
            assertEquals(l.token(), l2.token());
        }
    }
}

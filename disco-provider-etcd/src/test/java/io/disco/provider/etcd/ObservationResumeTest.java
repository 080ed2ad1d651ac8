package io.disco.provider.etcd;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Observation misses no term: the observer's only member is down while three terms follow each
 * other on the rest of the cluster; once it is back, the observer is told of every term, in order
 * (it resumes its watch where it stopped instead of reading only the latest leader).
 */
class ObservationResumeTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    @Test
    void termsWhileTheObserversMemberIsDownAreAllDelivered() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = Etcd.uniquePrefix("observe-resume");
        int down = Etcd.aMember(etcd, false);
        String[] others = IntStream.range(0, etcd.size())
                .filter(i -> i != down)
                .mapToObj(etcd::endpoint)
                .toArray(String[]::new);
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Client observerClient =
                        Client.builder().endpoints(etcd.endpoint(down)).build();
                Client candidates = Client.builder().endpoints(others).build();
                ElectionService watcher = EtcdProvider.newElection(observerClient, prefix, Etcd.ttl(30));
                ElectionService a = EtcdProvider.newElection(candidates, prefix, Etcd.ttl(30));
                ElectionService b = EtcdProvider.newElection(candidates, prefix, Etcd.ttl(30));
                ElectionService c = EtcdProvider.newElection(candidates, prefix, Etcd.ttl(30));
                Observation obs = watcher.observe(l -> seen.add(l.value()))) {
            a.campaign("a");
            await().atMost(Duration.ofSeconds(5)).until(() -> seen.contains("a"));

            etcd.kill(down);
            CompletableFuture<Leadership> bLeads = b.campaignAsync("b");
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> a.leader().isPresent() && countCandidates(candidates, prefix) == 2);
            CompletableFuture<Leadership> cLeads = c.campaignAsync("c");
            await().atMost(Duration.ofSeconds(5)).until(() -> countCandidates(candidates, prefix) == 3);
            a.resign();
            bLeads.get(5, SECONDS);
            b.proclaim("b2");
            b.resign();
            cLeads.get(5, SECONDS);
            etcd.startMember(down);

            await().atMost(Duration.ofSeconds(20)).until(() -> seen.contains("c"));
            assertEquals(List.of("a", "b", "b2", "c"), seen, "every term and value, in order");
        }
    }

    private static long countCandidates(Client client, String prefix) throws Exception {
        return Etcd.keysUnder(client, prefix).size();
    }
}

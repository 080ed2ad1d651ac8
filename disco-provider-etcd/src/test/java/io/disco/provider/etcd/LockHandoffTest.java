package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No thundering herd, and no read in a hand-off: a release reaches at most {@link PredecessorWait#WATCH_ALL_AT}
 * waiters watching the whole queue (and one watching its key as a horizon), so the watch traffic and the RPCs of one
 * handoff do not grow with the number of waiters; the waiter next in line is admitted by the delete's event itself,
 * and sends nothing but the record of its token.
 */
class LockHandoffTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void handoffCostDoesNotGrowWithTheQueue() throws Exception {
        Cost small = handoffCost(4);
        Cost large = handoffCost(3 * PredecessorWait.WATCH_ALL_AT);
        System.out.printf("per handoff: 4 waiters %s; %d waiters %s%n", small, 3 * PredecessorWait.WATCH_ALL_AT, large);
        // Each handoff: the delete event to the waiters watching the whole queue (at most WATCH_ALL_AT of them) and to
        // one watching the key as its horizon, and to the releaser's own-key watch; a little more when a liveness
        // probe moved a watch. A herd would deliver one to every waiter.
        assertTrue(
                large.watchMessages <= PredecessorWait.WATCH_ALL_AT + 3.0,
                "watch messages per handoff with " + 3 * PredecessorWait.WATCH_ALL_AT + " waiters: "
                        + large.watchMessages);
        // The waiter next in line reads nothing: its one request is the record of its token (the read after the
        // delete, as etcd's Go recipes make it, would be a second).
        assertTrue(small.kvRpcs <= 1.3, "KV RPCs per handoff with 4 waiters: " + small.kvRpcs);
        // Further back, a waiter reads once when its horizon key goes, before its turn: at most one more.
        assertTrue(
                large.kvRpcs <= small.kvRpcs + 1.0,
                "KV RPCs per handoff grew with the queue: " + small + " -> " + large);
    }

    /** Watch messages exclude the progress reports of the liveness probes, which depend on time, not on hand-overs. */
    record Cost(double watchMessages, double kvRpcs, double progressReports) {
        @Override
        public String toString() {
            return String.format(
                    "%.2f watch messages, %.2f KV RPCs (and %.2f progress reports)",
                    watchMessages, kvRpcs, progressReports);
        }
    }

    /** Queues {@code waiters} owners behind a holder, then measures the chain of handoffs through them. */
    private static Cost handoffCost(int waiters) throws Exception {
        RpcCounter counter = new RpcCounter();
        String prefix = uniquePrefix("herd");
        try (Client client = Client.builder()
                .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                .interceptor(counter)
                .build()) {
            List<LockService> services = new ArrayList<>();
            try {
                for (int i = 0; i <= waiters; i++) {
                    services.add(EtcdProvider.newLock(client, prefix, ttl(30)));
                }
                Grant first = services.get(0).lock();
                List<CompletableFuture<Grant>> queued = new ArrayList<>();
                for (int i = 1; i <= waiters; i++) {
                    queued.add(services.get(i).lockAsync());
                    // Register one at a time so the queue order is known.
                    int expected = i + 1;
                    await().atMost(Duration.ofSeconds(5))
                            .until(() -> keysUnder(client, prefix).size() == expected);
                }
                // Let every waiter's watches be established before measuring.
                await().atMost(Duration.ofSeconds(5)).until(() -> counter.received("Watch") >= 2L * waiters);

                long watchBefore = counter.received("Watch");
                long progressBefore = counter.progress();
                long kvBefore = counter.calls("KV/");
                long previous = first.token().value();
                services.get(0).unlock();
                for (int i = 0; i < waiters; i++) {
                    Grant g = queued.get(i).get(10, SECONDS);
                    assertTrue(g.token().value() > previous, "tokens must increase along the queue");
                    previous = g.token().value();
                    services.get(i + 1).unlock();
                }
                double progress = (counter.progress() - progressBefore) / (double) waiters;
                double watch = (counter.received("Watch") - watchBefore) / (double) waiters - progress;
                // Exclude the test's own unlock Txns: count what the acquisitions cost.
                double kv = (counter.calls("KV/") - kvBefore - waiters - 1) / (double) waiters;
                assertEquals(List.of(), keysUnder(client, prefix));
                return new Cost(watch, kv, progress);
            } finally {
                services.forEach(LockService::close);
            }
        }
    }
}

package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.stream.IntStream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Requests answered after the library gave up on them (issue 10, item 3): a member that the client
 * talks to is frozen (SIGSTOP) and resumed later, when it goes on with what it had received.
 */
class LateAnswerTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    private static final Duration TTL = Duration.ofSeconds(30);

    /**
     * The create Txn of a lock attempt reaches the frozen member and times out; the attempt gives up.
     * After SIGCONT the member applies the Txn: the key appears under the live lease. Nothing of it
     * may survive, and another owner must acquire within TTL + 1 s. The frozen member is a follower
     * and the owner's client has no deadline interceptor: the case where the late request is surely
     * applied (a frozen leader's own proposals are usually dropped when it learns of the new term).
     */
    @Test
    void aCreateAppliedAfterTheAttemptGaveUpLeavesNoKey() throws Exception {
        // etcd does not always apply the late request: in about one round in four here the resumed
        // member's proposal is dropped (nothing late then exists, and the round still checks that
        // nothing is left). Rounds repeat until one shows the late creation.
        int rounds = 0;
        boolean reproduced = false;
        while (!reproduced && rounds < 5) {
            rounds++;
            reproduced = lateCreateRound();
        }
        assertTrue(reproduced, "no late creation in " + rounds + " rounds: the scenario did not happen");
    }

    /** @return whether the late creation happened in this round (it was then deleted in time) */
    private boolean lateCreateRound() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = uniquePrefix("late-create");
        // Without failover (sending a copy to another member), so that the attempt gives up on the frozen member.
        EtcdOptions shortRequests = EtcdOptions.builder()
                .ttl(TTL)
                .requestTimeout(Duration.ofSeconds(1))
                .failoverAfter(Duration.ofSeconds(1))
                .build();
        int frozen = Etcd.aMember(etcd, false);
        String[] others = IntStream.range(0, etcd.size())
                .filter(i -> i != frozen)
                .mapToObj(etcd::endpoint)
                .toArray(String[]::new);
        try (Client all = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .build();
                Client healthy = Client.builder().endpoints(others).build();
                EtcdSession session = EtcdSession.open(all, shortRequests);
                LockService other = EtcdProvider.newLock(healthy, prefix, Etcd.ttl(10))) {
            LockService a = session.newLock(prefix);
            for (int i = 0; i < 10; i++) {
                Etcd.revision(all); // connected to every member before one freezes
            }
            etcd.pause(frozen);
            boolean resumed = false;
            try {
                // The client balances over all three members: some attempts reach the frozen one.
                List<String> unanswered = new ArrayList<>();
                for (int attempt = 0; attempt < 60 && unanswered.isEmpty(); attempt++) {
                    // One more call, unawaited, shifts the round robin: otherwise every attempt's create
                    // Txn may land on the same member (a try takes a fixed number of picks).
                    all.getKVClient().get(Etcd.bytes(prefix));
                    try {
                        a.tryLock().ifPresent(g -> unlockRetrying(a));
                    } catch (DiscoException e) {
                        unanswered.add(e.getMessage());
                    }
                }
                assertEquals(1, unanswered.size(), "no acquire Txn reached the frozen member");
                System.out.println("late create: the abandoned attempt: " + unanswered.get(0));
                // One more acquisition that etcd answers: it starts only once the abandoned attempt is settled.
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(10))
                        .ignoreExceptions()
                        .until(() -> a.tryLock().isPresent());
                unlockRetrying(a);
                assertEquals(List.of(), keysUnder(healthy, prefix), "nothing is left while the member is frozen");

                // Proof that the scenario happened: the late Txn's creation of a's key, seen on a healthy member.
                List<Long> lateCreations = new CopyOnWriteArrayList<>();
                String aKey = prefix + "/" + EtcdSession.hex(session.leaseId());
                try (Watch.Watcher w = healthy.getWatchClient()
                        .watch(
                                Etcd.bytes(aKey),
                                WatchOption.builder()
                                        .withRevision(Etcd.revision(healthy) + 1)
                                        .withNoDelete(true)
                                        .build(),
                                r -> r.getEvents().stream()
                                        .filter(ev -> ev.getEventType() == WatchEvent.EventType.PUT)
                                        .forEach(ev -> lateCreations.add(
                                                ev.getKeyValue().getCreateRevision())))) {
                    etcd.resume(frozen);
                    resumed = true;
                    long resumedAt = System.nanoTime();
                    try {
                        await().atMost(Duration.ofSeconds(10))
                                .pollInterval(Duration.ofMillis(1))
                                .until(() -> !lateCreations.isEmpty());
                    } catch (ConditionTimeoutException e) {
                        System.out.println("late create: etcd dropped the late request this round");
                        assertTrue(other.tryLock().isPresent(), "nothing may block the other owner");
                        other.unlock();
                        return false;
                    }
                    long lateMs = (System.nanoTime() - resumedAt) / 1_000_000;
                    Grant g =
                            other.lock(TTL.plusSeconds(1)); // the late key came first: the other owner queues behind it
                    long waitedMs = (System.nanoTime() - resumedAt) / 1_000_000;
                    System.out.printf(
                            "late create: the abandoned key was created %d ms after SIGCONT;"
                                    + " the other owner acquired %d ms after SIGCONT%n",
                            lateMs, waitedMs);
                    await().atMost(Duration.ofSeconds(5))
                            .untilAsserted(() -> assertEquals(
                                    List.of(g.key()), keysUnder(healthy, prefix), "the late keys must be gone"));
                }
                other.unlock();
                assertTrue(session.err().isEmpty(), "the session's lease is alive all along");
                assertEquals(Optional.empty(), a.held());
                return true;
            } finally {
                if (!resumed) {
                    etcd.resume(frozen);
                }
            }
        }
    }

    private static void unlockRetrying(LockService a) {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(10))
                .ignoreExceptions()
                .until(() -> {
                    a.unlock();
                    return a.held().isEmpty();
                });
    }

    /** A renewal sent to a frozen member does not leave its keepalive stream open once it has timed out. */
    @Test
    void renewalsToAFrozenMemberLeaveNoOpenStreams() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        RpcCounter counter = new RpcCounter();
        EtcdOptions options = Etcd.options(10, 1);
        try (Client onlyMember0 = Client.builder()
                        .endpoints(etcd.endpoint(0))
                        .interceptor(counter)
                        .build();
                EtcdSession session = EtcdSession.open(onlyMember0, options)) {
            etcd.pause(0);
            try {
                // Renewals every 3.3 s, each sent up to 6 times (failover copies) and given up after 1 s,
                // then retried 200 ms later: once a second renewal has begun, the first one's streams must be gone.
                await().atMost(Duration.ofSeconds(8)).until(() -> counter.calls("LeaseKeepAlive") >= 7);
                long open = counter.open("LeaseKeepAlive");
                System.out.printf(
                        "keepalive streams to the frozen member: %d started, %d still open%n",
                        counter.calls("LeaseKeepAlive"), open);
                assertTrue(open <= 6, () -> open + " keepalive streams are still open on the frozen member");
            } finally {
                etcd.resume(0);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> counter.received("LeaseKeepAlive") > 0);
            assertTrue(session.err().isEmpty(), "the lease survives a freeze shorter than its TTL");
        }
    }

    /** {@link EtcdDeadlines#unary}: a unary request to a frozen member fails at its deadline instead of waiting for the member. */
    @Test
    void theDeadlineInterceptorEndsUnaryCallsToAFrozenMember() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        RpcCounter counter = new RpcCounter();
        try (Client withDeadline = Client.builder()
                .endpoints(etcd.endpoint(0))
                .interceptor(EtcdDeadlines.unary(Duration.ofMillis(500)), counter)
                .build()) {
            withDeadline.getKVClient().get(Etcd.bytes("/warm-up")).get(10, SECONDS);
            etcd.pause(0);
            try {
                long start = System.nanoTime();
                ExecutionException e = assertThrows(
                        ExecutionException.class,
                        () -> withDeadline.getKVClient().get(Etcd.bytes("/x")).get(10, SECONDS));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(
                        Status.Code.DEADLINE_EXCEEDED,
                        Status.fromThrowable(e.getCause()).getCode(),
                        () -> "expected DEADLINE_EXCEEDED, got " + e.getCause());
                assertTrue(ms < 5_000, "failed after " + ms + " ms");
                assertEquals(0, counter.open("KV/Range"), "the call is closed on the client");
            } finally {
                etcd.resume(0);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> EtcdDeadlines.unary(Duration.ZERO));
        assertThrows(NullPointerException.class, () -> EtcdDeadlines.unary(null));
    }
}

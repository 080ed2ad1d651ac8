package io.disco.spring.scheduling;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * {@code @Scheduled} + {@code @LeaderOnly} in two application contexts, as two instances of a service (each its
 * own jetcd client, disco client and lease), on a 100 ms schedule, writing through one {@link Guard} with the
 * term's token: only the leader runs; the leader's run freezes (in-process, ignoring interrupts like a paused
 * process) and its lease is revoked from outside; the frozen run is interrupted, the other instance takes over
 * with a newer token and writes, and the frozen run's late write is rejected.
 */
class LeaderOnlyTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    /** One run: which instance, which token, whether the guard accepted it. */
    record Run(String instance, FencingToken token, boolean accepted) {}

    /** What both instances share. */
    static final class World {
        final Guard guard = Guard.create();
        final List<Run> runs = new CopyOnWriteArrayList<>();
        final AtomicBoolean freezeNext = new AtomicBoolean();
        final CountDownLatch frozen = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        final AtomicBoolean frozenInterrupted = new AtomicBoolean();
        final CompletableFuture<Object[]> frozenRun =
                new CompletableFuture<>(); // {instance, token, late write's outcome}
    }

    /** The scheduled work of one instance. */
    public static class Worker {
        private final World world;
        private final String instance;

        public Worker(World world, String instance) {
            this.world = world;
            this.instance = instance;
        }

        @Scheduled(fixedRate = 100)
        @LeaderOnly("${election}")
        public void work() {
            FencingToken token = CurrentTerm.token();
            if (world.freezeNext.compareAndSet(true, false)) {
                freeze(token);
                return;
            }
            boolean accepted;
            try {
                world.guard.check(token);
                accepted = true;
            } catch (TokenStaleException e) {
                accepted = false;
            }
            world.runs.add(new Run(instance, token, accepted));
        }

        /** A frozen process: deaf to the interrupt until resumed, then writes with its old token. */
        private void freeze(FencingToken token) {
            world.frozen.countDown();
            boolean resumed = false;
            while (!resumed) {
                try {
                    world.resume.await(20, TimeUnit.SECONDS);
                    resumed = true;
                } catch (InterruptedException e) {
                    world.frozenInterrupted.set(true);
                }
            }
            Object outcome;
            try {
                outcome = world.guard.check(token);
            } catch (TokenStaleException e) {
                outcome = e;
            }
            world.frozenRun.complete(new Object[] {instance, token, outcome});
        }
    }

    @Configuration
    @EnableScheduling
    @EnableLeaderOnly
    static class Config {}

    private static AnnotationConfigApplicationContext start(
            String instance, Client client, String election, World world) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment()
                .getPropertySources()
                .addFirst(new MapPropertySource("test", Map.of("election", election)));
        context.registerBean(Disco.class, () -> Etcd.disco(client), bd -> bd.setDestroyMethodName("close"));
        context.registerBean(Worker.class, () -> new Worker(world, instance));
        context.register(Config.class);
        context.refresh();
        return context;
    }

    @Test
    void onlyTheLeaderRunsAndAfterItsTermEndsTheOtherTakesOverAndTheOldTermsLateWriteIsRejected() throws Exception {
        String election = EtcdClaims.uniquePrefix("leader-only");
        World world = new World();
        try (Client clientA = EtcdClaims.client(ETCD.cluster());
                Client clientB = EtcdClaims.client(ETCD.cluster());
                Client admin = EtcdClaims.client(ETCD.cluster())) {
            AnnotationConfigApplicationContext a = start("a", clientA, election, world);
            AnnotationConfigApplicationContext b = start("b", clientB, election, world);
            try {
                await().atMost(Duration.ofSeconds(15)).until(() -> world.runs.size() >= 10);
                String leader = world.runs.get(0).instance();
                assertTrue(
                        world.runs.stream().allMatch(r -> r.instance().equals(leader) && r.accepted()),
                        "only the leader ran: " + world.runs);
                assertEquals(1, world.runs.stream().map(Run::token).distinct().count(), "one term");

                world.freezeNext.set(true);
                assertTrue(world.frozen.await(5, TimeUnit.SECONDS), "the leader's run froze");
                long revoked = System.nanoTime();
                EtcdClaims.revokeTheHolder(ETCD.cluster(), admin, election);

                int before = world.runs.size();
                await().atMost(Duration.ofSeconds(10)).until(() -> world.runs.size() > before + 2);
                long tookOverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - revoked);
                Run takeover = world.runs.get(before);
                assertTrue(
                        !takeover.instance().equals(leader) && takeover.accepted(), "the other took over: " + takeover);
                await().atMost(Duration.ofSeconds(5)).untilTrue(world.frozenInterrupted);

                world.resume.countDown();
                Object[] frozenRun = world.frozenRun.get(10, TimeUnit.SECONDS);
                FencingToken oldTerm = (FencingToken) frozenRun[1];
                assertTrue(takeover.token().isNewerThan(oldTerm), oldTerm + " then " + takeover.token());
                assertInstanceOf(TokenStaleException.class, frozenRun[2], "the old term's late write is rejected");
                int afterResume = world.runs.size();
                await().atMost(Duration.ofSeconds(5)).until(() -> world.runs.size() > afterResume + 3);
                assertTrue(
                        world.runs.subList(before, world.runs.size()).stream()
                                .allMatch(r -> r.instance().equals(takeover.instance()) && r.accepted()),
                        "only the new leader runs: " + world.runs.subList(before, world.runs.size()));
                System.out.printf(
                        "term %s (%s) frozen and revoked; %s took over with term %s after %d ms;"
                                + " the late write: %s%n",
                        oldTerm, leader, takeover.instance(), takeover.token(), tookOverMs, frozenRun[2]);
            } finally {
                world.resume.countDown();
                a.close();
                b.close();
            }
        }
    }

    @Test
    void outsideALeaderOnlyMethodThereIsNoTerm() {
        assertThrows(IllegalStateException.class, CurrentTerm::token);
        assertTrue(CurrentTerm.find().isEmpty());
    }

    /** A leader-only method must return void: a call that does not lead returns nothing. */
    public static class NotVoid {
        @LeaderOnly("/elections/x")
        public int count() {
            return 1;
        }
    }

    @Test
    void aLeaderOnlyMethodThatReturnsAValueIsRefusedAtStartup() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(NotVoid.class);
        context.register(Config.class);
        BeanCreationException e = assertThrows(BeanCreationException.class, context::refresh);
        assertTrue(
                e.getMostSpecificCause().getMessage().contains("must return void"),
                e.getMostSpecificCause().getMessage());
    }
}

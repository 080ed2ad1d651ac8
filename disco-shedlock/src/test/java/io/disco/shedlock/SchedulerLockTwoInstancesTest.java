package io.disco.shedlock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.LockLostException;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * {@code @EnableSchedulerLock} and {@code @SchedulerLock} in two Spring application contexts, as two instances
 * of a service run (each its own jetcd client, disco client and lease), on a 100 ms schedule, writing through
 * one {@link Guard} (the resource) with the run's token:
 * <ul>
 *   <li>for 10 s (100 ticks: the minute cut to keep the suite short on 2 shared cores), exactly
 *       one run per tick across both instances: no tick runs twice (lockAtLeastFor, 80 ms, keeps the key for
 *       a tick's late second run), and few ticks (on a loaded machine, those whose runs both started more than
 *       20 ms late) none; tokens strictly increase; every write is accepted;</li>
 *   <li>a frozen instance: one run blocks past its lockAtMostFor (700 ms, in-process); the other instance runs
 *       the next tick with a newer token and writes; the frozen run, resumed, writes with its old token and the
 *       guard rejects it, and {@link SchedulerLockToken#current()} tells it its hold was lost.</li>
 * </ul>
 * The two instances' ticks are aligned on the wall clock's 100 ms (a trigger registered through
 * {@link SchedulingConfigurer} calling the {@code @SchedulerLock} method of the proxied bean), so that a tick
 * is one moment for both; {@code @Scheduled(fixedRate = 100)} would give each instance its own phase.
 */
class SchedulerLockTwoInstancesTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    static final long TICK_MS = 100;

    /** One run: which instance, which tick, which token, and whether the guard accepted it. */
    record Run(String instance, long tick, FencingToken token, boolean accepted) {}

    /** What both instances share: the resource (the guard), the record of runs, the freeze switch. */
    static final class World {
        final Guard guard = Guard.create();
        final List<Run> runs = new CopyOnWriteArrayList<>();
        final AtomicBoolean freezeNext = new AtomicBoolean();
        final CountDownLatch frozen = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        final CompletableFuture<Object[]> frozenRun =
                new CompletableFuture<>(); // {token, late write's outcome, token() after}
        volatile String frozenInstance;
    }

    /** The scheduled task: a bean of each context, proxied by ShedLock. */
    public static class Ticker {
        private final World world;
        private final String instance;

        public Ticker(World world, String instance) {
            this.world = world;
            this.instance = instance;
        }

        /** @param tick the tick: its scheduled time over 100 ms */
        @SchedulerLock(name = "tick", lockAtMostFor = "PT0.7S", lockAtLeastFor = "PT0.08S")
        public void tick(long tick) {
            FencingToken token = SchedulerLockToken.current();
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
            world.runs.add(new Run(instance, tick, token, accepted));
        }

        /** A zombie: stops past lockAtMostFor (as a GC pause or a frozen VM would), then writes with its old token. */
        private void freeze(FencingToken token) {
            world.frozenInstance = instance;
            world.frozen.countDown();
            try {
                world.resume.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Object outcome;
            try {
                outcome = world.guard.check(token);
            } catch (TokenStaleException e) {
                outcome = e;
            }
            Object after;
            try {
                after = SchedulerLockToken.current();
            } catch (RuntimeException e) {
                after = e;
            }
            world.frozenRun.complete(new Object[] {token, outcome, after});
        }
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1S")
    static class Config implements SchedulingConfigurer {

        private final Ticker ticker;

        Config(Ticker ticker) {
            this.ticker = ticker;
        }

        @Bean
        static DiscoLockProvider lockProvider(Disco disco, String prefix) {
            return new DiscoLockProvider(disco, prefix);
        }

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            // the scheduler asks the trigger for the next time after each run, so a run's tick is the last one given
            AtomicLong next = new AtomicLong();
            registrar.addTriggerTask(() -> ticker.tick(next.get()), context -> {
                long tick = System.currentTimeMillis() / TICK_MS + 1;
                next.set(tick);
                return Instant.ofEpochMilli(tick * TICK_MS);
            });
        }
    }

    private static AnnotationConfigApplicationContext start(
            String instance, Client client, String prefix, World world) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean("prefix", String.class, () -> prefix);
        context.registerBean(Disco.class, () -> Etcd.disco(client), bd -> bd.setDestroyMethodName("close"));
        context.registerBean(Ticker.class, () -> new Ticker(world, instance));
        context.register(Config.class);
        context.refresh();
        return context;
    }

    @Test
    void oneRunPerTickAcrossTwoInstancesAndAFrozenRunsLateWriteIsRejected() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("shedlock-spring");
        World world = new World();
        try (Client clientA = EtcdClaims.client(ETCD.cluster());
                Client clientB = EtcdClaims.client(ETCD.cluster())) {
            AnnotationConfigApplicationContext a = start("a", clientA, prefix, world);
            AnnotationConfigApplicationContext b = start("b", clientB, prefix, world);
            try {
                await().atMost(Duration.ofSeconds(10)).until(() -> world.runs.size() >= 5);
                long firstTick = world.runs.get(world.runs.size() - 1).tick() + 1;
                long lastTick = firstTick + 100; // 10 s of ticks
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> world.runs.stream().anyMatch(r -> r.tick() > lastTick));
                List<Run> window = new ArrayList<>();
                for (Run r : world.runs) {
                    if (r.tick() >= firstTick && r.tick() <= lastTick) {
                        window.add(r);
                    }
                }
                Map<Long, Run> byTick = new HashMap<>();
                for (Run r : window) {
                    Run twice = byTick.put(r.tick(), r);
                    assertTrue(twice == null, "tick " + r.tick() + " ran twice: " + twice + " and " + r);
                }
                for (int i = 1; i < world.runs.size(); i++) {
                    assertTrue(
                            world.runs
                                    .get(i)
                                    .token()
                                    .isNewerThan(world.runs.get(i - 1).token()),
                            "tokens strictly increase: " + world.runs.get(i - 1) + " then " + world.runs.get(i));
                }
                assertTrue(world.runs.stream().allMatch(Run::accepted), "every write accepted");
                long ticks = lastTick - firstTick + 1;
                long byA = window.stream().filter(r -> r.instance().equals("a")).count();
                System.out.printf(
                        "%d ticks, %d runs (a %d, b %d), %d ticks without a run%n",
                        ticks, window.size(), byA, window.size() - byA, ticks - window.size());
                assertTrue(window.size() >= ticks * 70 / 100, window.size() + " runs in " + ticks + " ticks");

                // the freeze
                world.freezeNext.set(true);
                assertTrue(world.frozen.await(5, TimeUnit.SECONDS), "a run froze");
                int before = world.runs.size();
                await().atMost(Duration.ofSeconds(5)).until(() -> world.runs.size() > before);
                Run takeover = world.runs.get(before);
                assertTrue(!takeover.instance().equals(world.frozenInstance), "the other instance ran: " + takeover);
                assertTrue(takeover.accepted());
                world.resume.countDown();
                Object[] frozenRun = world.frozenRun.get(5, TimeUnit.SECONDS);
                FencingToken frozenToken = (FencingToken) frozenRun[0];
                assertTrue(takeover.token().isNewerThan(frozenToken), frozenToken + " then " + takeover.token());
                assertInstanceOf(TokenStaleException.class, frozenRun[1], "the frozen run's late write is rejected");
                assertInstanceOf(LockLostException.class, frozenRun[2], "the frozen run is told its hold was lost");
                System.out.printf(
                        "frozen run's token %s, the other instance's run %s; late write: %s%n",
                        frozenToken, takeover.token(), frozenRun[1]);
                int afterResume = world.runs.size();
                await().atMost(Duration.ofSeconds(5)).until(() -> world.runs.size() > afterResume + 5);
                assertEquals(
                        List.of(),
                        world.runs.stream().filter(r -> !r.accepted()).toList());
            } finally {
                world.resume.countDown();
                a.close();
                b.close();
            }
        }
    }
}

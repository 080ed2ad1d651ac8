package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.benchmarks.Contention.Owner;
import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.redis.RedisProvider;
import io.disco.testservers.RedisServer;
import io.disco.testservers.RpcCounter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * Case "redis" (section R, issue 48 item 6): locks on one throwaway standalone Redis ({@link RedisServer}: a
 * {@code redis-server} on a loopback port, AOF with {@code appendfsync always}, data on {@code /dev/shm}), side by
 * side:
 *
 * <ul>
 *   <li><b>the floor</b> ({@link RedisFloor}): the fewest round trips any correct lock with a fencing token needs, one
 *       {@code EVALSHA} to acquire ({@code INCR} the name's token counter and {@code SET NX PX} the lock key with owner
 *       and token, in one script) and one to release (delete if the value is ours);
 *   <li><b>Spring Integration's {@code RedisLockRegistry}</b> ({@link LockRegistryOwner}) in its default mode, {@link
 *       RedisLockType#SPIN_LOCK} (a waiter tries again every 100 ms), and in {@link RedisLockType#PUB_SUB_LOCK} (a
 *       waiter is told of the release on a pub/sub channel); neither has a fencing token;
 *   <li><b>disco's Redis lock</b> ({@link #disco()}).
 * </ul>
 *
 * Measured: one uncontended lock+unlock, every contestant once a round in a new order each round ({@link
 * Interleaved#shuffled}), median, p90 and p99; contended hand-offs at K = 1, 4, 16, 64 owners ({@link Contention}),
 * acquisitions per second; and for both, Redis requests per acquisition ({@link RedisRequests}: the commands the
 * clients sent, and the commands the server ran by {@code INFO commandstats}, those inside scripts included).
 *
 * <p>What is comparable: <b>every owner is a client of its own</b>, as in the ZooKeeper case: for {@code
 * RedisLockRegistry} a {@code LettuceConnectionFactory} and a registry of its own (one registry shared by K threads
 * would queue them on its local lock and send one of them at a time to Redis), for disco a Lettuce {@code RedisClient}
 * and a {@code Disco} of its own, for the floor a {@code RedisClient} of its own; all of them on one shared Lettuce
 * {@code ClientResources} (the same event-loop threads for all, not K thread pools). What every owner does once in a
 * running application is done when it is opened, before it is measured: its connection and scripts (one lock+unlock),
 * and for {@code PUB_SUB_LOCK} its listener's subscription. What is not the same: {@code SPIN_LOCK} lets the releasing
 * owner take the lock again at once while the others sleep, so its acquisitions per second are not those of a
 * first-come-first-served queue ({@code to_another_owner}: the share of acquisitions that went to another owner than
 * the one before; {@code handovers_per_s}: those per second; {@code wait_p99_ms}: the longest waits); {@code
 * RedisLockRegistry} gives no token, does not renew its 60 s expiry, and unlocks on a thread of its pool.
 *
 * <p>Targets (issue 48 item 6), printed with met or missed: uncontended disco ≤ 1.2 × the floor
 * and ≤ {@code RedisLockRegistry} (its default mode) at the median, p90 and p99; contended acquisitions per second ≥
 * {@code RedisLockRegistry}'s at every K.
 */
final class RedisVsLockRegistry implements BenchCase {

    private static final String SECTION = "R redis";
    private static final String FLOOR = "floor (EVALSHA acquire + EVALSHA release)";
    private static final String SPIN = "RedisLockRegistry SPIN_LOCK (the default)";
    private static final String PUB_SUB = "RedisLockRegistry PUB_SUB_LOCK";
    private static final String DISCO = "disco";

    /** Opens one owner of a lock's {@code name}, with a client of its own. */
    private interface Opener {
        Owner open(String name) throws Exception;
    }

    /** One lock the case measures: its label in the rows, and how an owner of it is opened. */
    private record Contestant(String label, Opener opener) {}

    private Bench bench;
    private RedisServer redis;
    private ClientResources resources;
    private RedisRequests requests;
    /** The prefix of every name and key of the run. */
    private String prefix;
    /** The registries' key prefix. */
    private String registryKey;

    /** Median, p90, p99 of the uncontended lock+unlock, by contestant. */
    private final Map<String, double[]> uncontended = new LinkedHashMap<>();
    /** Acquisitions per second by contestant and K. */
    private final Map<String, Map<Integer, Double>> perSecond = new LinkedHashMap<>();

    @Override
    public void run(Bench bench) throws Exception {
        this.bench = bench;
        String id = bench.root.substring(bench.root.lastIndexOf('/') + 1);
        prefix = "/disco-bench/" + id + "/redis";
        registryKey = "disco-bench-" + id;
        try {
            redis = RedisServer.start();
        } catch (IllegalStateException e) {
            log("R. Redis: not measured: %s", e.getMessage());
            bench.report.notes.add("Redis (section R): not measured, no redis-server started: " + e.getMessage());
            return;
        }
        resources = DefaultClientResources.create();
        try (RedisServer server = redis) {
            String version = ((String) server.command("INFO", "server"))
                    .lines()
                    .filter(l -> l.startsWith("redis_version:"))
                    .map(l -> l.substring("redis_version:".length()))
                    .findFirst()
                    .orElse("?");
            log("R. Redis %s: the floor, RedisLockRegistry and disco on %s", version, server);
            bench.report.meta.put("redis", "redis-server " + version + ", " + server);
            requests = new RedisRequests(server);
            // PUB_SUB_LOCK owners find this key held when they are opened, which subscribes their listener
            server.command("SET", registryKey + ":" + LockRegistryOwner.HELD_KEY, "the-case");
            List<Contestant> waiting = new ArrayList<>(List.of(
                    new Contestant(SPIN, name -> registryOwner(null, name)),
                    new Contestant(PUB_SUB, name -> registryOwner(RedisLockType.PUB_SUB_LOCK, name))));
            waiting.add(disco());
            List<Contestant> all = new ArrayList<>();
            all.add(new Contestant(FLOOR, this::floorOwner));
            all.addAll(waiting);
            uncontended(all);
            contended(waiting);
            targets();
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ the contestants

    private Owner floorOwner(String name) {
        RedisClient client = requests.count(RedisClient.create(resources));
        try {
            RedisFloor floor = new RedisFloor(client, RedisURI.create(redis.uri()), name);
            return new Owner(floor::lock, floor::unlock, () -> {
                floor.close();
                client.shutdown();
            });
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    private Owner registryOwner(RedisLockType type, String name) throws InterruptedException {
        return LockRegistryOwner.open(redis.host(), redis.port(), resources, requests, registryKey, type, name);
    }

    /**
     * disco's Redis lock as a contestant: each owner a Lettuce {@code RedisClient} of its own on {@link #resources},
     * counted by {@link #requests}, {@code RedisProvider.disco(client, uri, options)} on it, and {@code
     * disco.lock(name)}, locked and unlocked once when opened (as the other contestants are).
     */
    private Contestant disco() {
        return new Contestant(DISCO, name -> {
            RedisClient client = requests.count(RedisClient.create(resources));
            try {
                Disco disco = RedisProvider.disco(client, RedisURI.create(redis.uri()), RedisOptions.defaults());
                FencedLock lock = disco.lock(name);
                lock.lock();
                lock.unlock();
                return new Owner(lock::lock, lock::unlock, () -> {
                    disco.close();
                    client.shutdown();
                });
            } catch (RuntimeException e) {
                client.shutdown();
                throw e;
            }
        });
    }

    // ------------------------------------------------------------------ the steps

    private void uncontended(List<Contestant> all) throws Exception {
        int warm = bench.quick ? 60 : 500;
        int rounds = bench.quick ? 200 : 2000;
        int counted = bench.quick ? 20 : 100;
        log(
                "R1. uncontended lock+unlock: %d warm-up + %d rounds of %d contestants in a new order each round",
                warm, rounds, all.size());
        List<Owner> owners = new ArrayList<>();
        try {
            for (int i = 0; i < all.size(); i++) {
                owners.add(all.get(i).opener().open(prefix + "/u/" + i));
            }
            Interleaved.Variant[] variants = new Interleaved.Variant[owners.size()];
            for (int i = 0; i < variants.length; i++) {
                Owner o = owners.get(i);
                variants[i] = () -> {
                    o.lock().run();
                    o.unlock().run();
                };
            }
            double[][] samples = Interleaved.shuffled(warm, rounds, new Random(37), variants);
            // requests of one lock+unlock: each contestant alone, in a pass of its own
            List<RedisRequests.Snapshot> perCall = new ArrayList<>();
            for (Interleaved.Variant v : variants) {
                RedisRequests.Snapshot before = requests.snapshot();
                for (int n = 0; n < counted; n++) {
                    v.run();
                }
                perCall.add(requests.snapshot().minus(before));
            }
            for (int i = 0; i < all.size(); i++) {
                String label = all.get(i).label();
                double[] s = samples[i];
                double[] pct = {Stats.median(s), Stats.percentile(s, 90), Stats.p99(s)};
                uncontended.put(label, pct);
                List<Object> figures = new ArrayList<>(List.of(perCall.get(i).figures(counted)));
                if (i > 0) {
                    figures.addAll(List.of("vs_floor", pct[0] / uncontended.get(FLOOR)[0]));
                }
                if (label.equals(DISCO)) {
                    figures.addAll(List.of("vs_registry", pct[0] / uncontended.get(SPIN)[0]));
                }
                bench.report.row(
                        SECTION, "uncontended lock+unlock, " + label, pct[0], pct[1], pct[2], "ms", figures.toArray());
                bench.report.notes.add("Redis requests per uncontended lock+unlock, " + label + ": "
                        + perCall.get(i).breakdown(counted));
            }
        } finally {
            closeAll(owners);
        }
    }

    private void contended(List<Contestant> waiting) throws Exception {
        RpcCounter none = new RpcCounter(); // etcd's counter: nothing of this case goes through it
        for (int k : Contention.OWNERS) {
            for (int i = 0; i < waiting.size(); i++) {
                Contestant c = waiting.get(i);
                log("R2. contended hand-offs, K = %d owners: %s", k, c.label());
                String name = prefix + "/c/" + i + "-" + k;
                perSecond.computeIfAbsent(c.label(), l -> new TreeMap<>());
                Counted counted = new Counted();
                Contention.Result r = Contention.measure(
                        none, bench.quick, k, () -> c.opener().open(name), counted);
                perSecond.get(c.label()).put(k, r.perSecond());
                List<Object> figures = new ArrayList<>(List.of(counted.delta.figures(r.acquisitions())));
                figures.addAll(List.of(
                        "to_another_owner",
                        r.toAnotherOwner(),
                        "handovers_per_s",
                        r.perSecond() * r.toAnotherOwner(),
                        "wait_p99_ms",
                        Stats.p99(r.waitMs())));
                if (c.label().equals(DISCO)) {
                    figures.addAll(List.of(
                            "vs_registry", r.perSecond() / perSecond.get(SPIN).get(k)));
                }
                r.reportHandoffs(
                        bench.report, SECTION, "K=" + k + " handoff, " + c.label(), "unlock_ms", figures.toArray());
                if (k == Contention.OWNERS[Contention.OWNERS.length - 1]) {
                    bench.report.notes.add("Redis requests per contended acquisition at K = " + k + ", " + c.label()
                            + ": " + counted.delta.breakdown(r.acquisitions()));
                }
            }
        }
        bench.report.notes.add("Redis (section R): one standalone redis-server on loopback (AOF, appendfsync always,"
                + " data on /dev/shm); every owner a client of its own on one shared Lettuce ClientResources;"
                + " requests = commands the clients sent, server_cmds = INFO commandstats (scripts' own calls"
                + " included); RedisLockRegistry SPIN_LOCK, its default, retries every 100 ms and lets the releasing"
                + " owner take the lock again at once (to_another_owner below 1), so its acquisitions/s are not a"
                + " first-come-first-served queue's; neither of its modes has a fencing token");
    }

    /** The targets for disco. */
    private void targets() {
        double[] disco = uncontended.get(DISCO);
        percentileTarget("disco lock+unlock vs the Redis floor", 1.2, disco, uncontended.get(FLOOR), FLOOR);
        percentileTarget("disco lock+unlock vs RedisLockRegistry", 1.0, disco, uncontended.get(SPIN), SPIN);
        List<String> text = new ArrayList<>();
        List<String> pubSub = new ArrayList<>();
        boolean all = true;
        for (Map.Entry<Integer, Double> e : perSecond.get(DISCO).entrySet()) {
            int k = e.getKey();
            double d = e.getValue();
            double s = perSecond.get(SPIN).get(k);
            all &= d >= s;
            text.add(String.format(Locale.ROOT, "K=%d: %.2f (%.0f vs %.0f/s)", k, d / s, d, s));
            pubSub.add(String.format(
                    Locale.ROOT, "K=%d %.2f", k, d / perSecond.get(PUB_SUB).get(k)));
        }
        bench.report.target(
                "contended acquisitions/s, disco vs RedisLockRegistry (Redis)",
                ">= 1.0 x at every K",
                String.join(", ", text),
                all,
                "RedisLockRegistry's default spin lock lets the releasing owner take the lock again at once (see"
                        + " to_another_owner); against its PUB_SUB_LOCK: " + String.join(", ", pubSub));
    }

    /** A target "disco at most {@code max} x {@code label}" at the median, p90 and p99. */
    private void percentileTarget(String name, double max, double[] disco, double[] other, String label) {
        double r50 = disco[0] / other[0];
        double r90 = disco[1] / other[1];
        double r99 = disco[2] / other[2];
        bench.report.target(
                name,
                String.format(Locale.ROOT, "<= %.2f x at the median, p90 and p99", max),
                String.format(
                        Locale.ROOT,
                        "%.3f / %.3f / %.3f x (disco %.3f / %.3f / %.3f ms, %s %.3f / %.3f / %.3f ms)",
                        r50,
                        r90,
                        r99,
                        disco[0],
                        disco[1],
                        disco[2],
                        label,
                        other[0],
                        other[1],
                        other[2]),
                r50 <= max && r90 <= max && r99 <= max,
                "");
    }

    /** The requests of one contended run, read when it starts and ends. */
    private final class Counted implements Contention.Window {
        private RedisRequests.Snapshot before;
        RedisRequests.Snapshot delta;

        @Override
        public void started() {
            before = requests.snapshot();
        }

        @Override
        public void ended() {
            delta = requests.snapshot().minus(before);
        }
    }

    private static void closeAll(List<Owner> owners) throws Exception {
        Exception failure = null;
        for (Owner o : owners) {
            try {
                o.resources().close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}

package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.redis.RedisKeys;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code disco watch NAME} on Redis: the tool subscribes to the name's channel {@code disco:{<name>}:ch} (the ids of
 * the waiting claims a grant, release or break admits, and an election's new terms) and to
 * {@link RedisKeys#GONE_CHANNEL} (the claims {@code disco break} deleted); each message, and every
 * {@link LeaseClock#INTERVAL_MILLIS} (an uncontended grant or release publishes nothing), lists the claimants again
 * and compares, so every line says what the listing says. A claimant that is gone is {@code broken} when its deletion
 * was announced on the gone channel, {@code expired} when its key's TTL, as last read while it was there, had run out
 * by then (its owner stopped renewing it), else {@code released} (a holder) or {@code withdrew} (a waiter). A key that
 * went between a listing and its TTL's read keeps the reading before. Redis unreachable: it
 * says so once, keeps trying, and says when Redis answers again (Lettuce reconnects and subscribes again; what was
 * published meanwhile is lost, so a break in the gap reads as released).
 */
final class RedisWatch {

    /** How much of a TTL may be left and still read as expired: the time between two listings and a round trip. */
    private static final long EXPIRY_SLACK_MILLIS = 250;

    private final Redis redis;
    private final String name;
    private final Primitive given;
    private final PrintWriter out;
    private final PrintWriter err;
    private final BlockingQueue<Boolean> wakeUps = new LinkedBlockingQueue<>();
    /** The claimant keys ({@code <name>/<id>}) whose deletion was announced on the gone channel. */
    private final Set<String> broken = ConcurrentHashMap.newKeySet();

    RedisWatch(Redis redis, String name, Primitive given, PrintWriter out, PrintWriter err) {
        this.redis = redis;
        this.name = name;
        this.given = given;
        this.out = out;
        this.err = err;
    }

    /** Watches until the thread is interrupted. */
    int run() {
        StatefulRedisPubSubConnection<String, String> sub = redis.subscriber();
        sub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                if (RedisKeys.GONE_CHANNEL.equals(channel)) {
                    // 'c <owner> <claim key>': a claim deleted behind its owner's back
                    String[] f = message.split(" ", 3);
                    if (f.length == 3 && "c".equals(f[0])) {
                        RedisKeys.parseClaim(f[2])
                                .filter(p -> p[0].equals(name))
                                .ifPresent(p -> broken.add(RedisKeys.grantKey(p[0], p[1])));
                    }
                }
                wakeUps.add(true);
            }
        });
        redis.await(
                sub.async().subscribe(RedisKeys.channel(name), RedisKeys.GONE_CHANNEL),
                "subscription to " + RedisKeys.channel(name));
        try {
            Primitive kind = given != null ? given : redis.detect(name).orElse(null);
            Map<String, Claimant> last = new LinkedHashMap<>();
            if (kind != null) {
                for (Claimant c : list(kind)) {
                    line(c.role() == Claimant.Role.HOLDER ? "holding" : "waiting", kind, c);
                    last.put(c.key(), c);
                }
                out.printf(
                        "%s watching %s %s (%d holding or waiting); Ctrl-C to stop%n",
                        WatchCommand.time(), KeyLayout.label(kind), name, last.size());
            } else {
                out.printf(
                        "%s watching %s: nobody holds or waits for it now; waiting for a claim (its kind is found from its"
                                + " first keys; --primitive names it); Ctrl-C to stop%n",
                        WatchCommand.time(), name);
            }
            out.flush();
            Instant unreachableSince = null;
            while (!Thread.currentThread().isInterrupted()) {
                if (wakeUps.poll(LeaseClock.INTERVAL_MILLIS, TimeUnit.MILLISECONDS) != null) {
                    wakeUps.clear();
                }
                try {
                    if (kind == null) {
                        kind = redis.detect(name).orElse(null);
                        if (kind != null) {
                            out.printf("%s %s is claimed as a %s%n", WatchCommand.time(), name, KeyLayout.label(kind));
                        }
                    }
                    if (kind != null) {
                        last = compare(kind, last, list(kind));
                    }
                    if (unreachableSince != null) {
                        err.printf(
                                "disco: %s Redis answers again (unreachable for %d s); listing anew%n",
                                WatchCommand.time(),
                                Duration.between(unreachableSince, Instant.now())
                                        .toSeconds());
                        unreachableSince = null;
                    }
                } catch (CliFailure f) {
                    if (Thread.currentThread().isInterrupted()) {
                        break; // Ctrl-C (or the caller's interrupt) during a read: the end of the watch
                    }
                    if (f.exitCode() != ExitCode.UNREACHABLE) {
                        throw f;
                    }
                    if (unreachableSince == null) {
                        unreachableSince = Instant.now();
                        err.printf(
                                "disco: %s %s; still watching: trying again until it answers%n",
                                WatchCommand.time(), f.getMessage());
                    }
                }
                out.flush();
                err.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return ExitCode.OK;
    }

    /** Lists the claimants (with their keys' TTLs, which {@link Redis#ttl} keeps with when each was read). */
    private List<Claimant> list(Primitive kind) {
        return redis.claimants(kind, name);
    }

    /** Prints what changed from {@code before} to {@code after}; returns {@code after} by key. */
    private Map<String, Claimant> compare(Primitive kind, Map<String, Claimant> before, List<Claimant> after) {
        Map<String, Claimant> next = new LinkedHashMap<>();
        for (Claimant c : after) {
            next.put(c.key(), c);
        }
        for (Claimant c : before.values()) {
            if (!next.containsKey(c.key())) {
                line(ending(c), kind, c);
                broken.remove(c.key());
                redis.forget(c.key());
            }
        }
        for (Claimant c : after) {
            Claimant was = before.get(c.key());
            if (c.role() == Claimant.Role.HOLDER && (was == null || was.role() == Claimant.Role.WAITER)) {
                line("acquired", kind, c);
            } else if (was == null) {
                line("queued", kind, c);
            } else if (c.role() == Claimant.Role.HOLDER && !Objects.equals(c.token(), was.token())) {
                line("token", kind, c);
            }
        }
        return next;
    }

    /** How {@code gone} went: broken (announced), expired (its TTL had run out), else released or withdrew. */
    private String ending(Claimant gone) {
        if (broken.contains(gone.key())) {
            return "broken";
        }
        Optional<Redis.TtlReading> ttl = redis.ttl(gone.key());
        if (ttl.isPresent() && ttl.get().pttl() >= 0) {
            long since =
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ttl.get().atNanos());
            if (since + EXPIRY_SLACK_MILLIS >= ttl.get().pttl()) {
                return "expired";
            }
        }
        return gone.role() == Claimant.Role.HOLDER ? "released" : "withdrew";
    }

    private void line(String event, Primitive kind, Claimant c) {
        WatchCommand.line(out, event, kind, c, true, name);
    }
}

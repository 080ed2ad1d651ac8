package io.disco.chaos;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.IssuedBound;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The chaos resource's {@link IssuedBound} on a Sentinel-managed Redis: at least every token the provider had issued
 * when the read began, so that the guard refuses the {@link Hostile} owner's forged tokens without refusing a real
 * one. A tool of the suite, not the provider's bound (issue 48 item 5 asks whether a sound one exists for
 * applications): it scans every name's token record, which only a test can afford.
 *
 * <p>A token is {@code epoch << 43 | gen << 32 | seq} (docs/redis-design.md section 2), its epoch a {@code config-epoch}
 * that a majority of the sentinels reported for its primary when it was issued. The read:
 * <ol>
 *   <li>asks every sentinel for the master ({@code SENTINEL MASTER}); a majority must answer; {@code E} is the
 *       highest {@code config-epoch} answered (sentinels' epochs only rise, and any majority meets the one that
 *       reported the epoch of a token issued before, so every such token's epoch is at most {@code E}), and the
 *       primary is the address answered with it;</li>
 *   <li>reads every token record ({@code disco:*:tok}: {@code epoch}, {@code gen}, {@code seq}) on that primary: the
 *       primary of epoch {@code E} is the only server that issues tokens of epoch {@code E}, and its record of a name
 *       holds every one it issued (an append-only file with {@code appendfsync always} across its restarts);</li>
 *   <li>asks the sentinels again, and starts over (three times at most) if {@code E} rose meanwhile.</li>
 * </ol>
 * The bound is the highest of {@code (E << 43) - 1} (every token of an earlier epoch) and every record read. A forged
 * token of epoch {@code E} below the highest record of that epoch would pass (as it would on etcd below the revision):
 * the hostile owner's tokens ({@code 2^63-1}, and random ones from {@code 2^40} up) are far above.
 */
final class RedisTokenBound implements IssuedBound {

    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private final RedisClient client = RedisClient.create();
    private final RedisURI uri;
    private final ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "chaos-redis-bound");
        t.setDaemon(true);
        return t;
    });
    private final List<StatefulRedisSentinelConnection<String, String>> sentinels = new ArrayList<>();
    private final Map<String, StatefulRedisConnection<String, String>> servers = new HashMap<>();

    private RedisTokenBound(RedisURI uri) {
        this.uri = uri;
    }

    /** @param sentinelUri {@code redis-sentinel://h:p,h:p,h:p#master}, the sentinels reached directly */
    static RedisTokenBound of(String sentinelUri) {
        return new RedisTokenBound(RedisURI.create(sentinelUri));
    }

    @Override
    public CompletionStage<FencingToken> current() {
        return CompletableFuture.supplyAsync(this::read, reader);
    }

    /** The epoch and the primary the sentinels name with it. */
    private record Named(long epoch, String address) {}

    private FencingToken read() {
        for (int attempt = 0; attempt < 3; attempt++) {
            Named before = ask();
            long records = records(before.address());
            Named after = ask();
            if (after.epoch() == before.epoch()) {
                long bound = Math.max(records, (before.epoch() << 43) - 1);
                return FencingToken.of(Math.max(1, bound));
            }
        }
        throw new IllegalStateException("the sentinels' epoch kept rising while the token records were read");
    }

    private Named ask() {
        if (sentinels.isEmpty()) {
            for (RedisURI s : uri.getSentinels()) {
                RedisURI direct = RedisURI.builder()
                        .withHost(s.getHost())
                        .withPort(s.getPort())
                        .withTimeout(TIMEOUT)
                        .build();
                sentinels.add(client.connectSentinel(direct));
            }
        }
        int answers = 0;
        Named best = null;
        for (StatefulRedisSentinelConnection<String, String> s : sentinels) {
            try {
                Map<String, String> m = s.sync().master(uri.getSentinelMasterId());
                long epoch = Long.parseLong(m.get("config-epoch"));
                answers++;
                if (best == null || epoch > best.epoch()) {
                    best = new Named(epoch, m.get("ip") + ":" + m.get("port"));
                }
            } catch (RuntimeException e) {
                // counted as no answer
            }
        }
        if (answers * 2 <= sentinels.size() || best == null) {
            throw new IllegalStateException("only " + answers + " of " + sentinels.size() + " sentinels answered");
        }
        return best;
    }

    /** @return the highest token in any name's record on the server at {@code address}, or 0 */
    private long records(String address) {
        StatefulRedisConnection<String, String> c = servers.computeIfAbsent(address, a -> {
            String[] hp = a.split(":");
            return client.connect(RedisURI.builder()
                    .withHost(hp[0])
                    .withPort(Integer.parseInt(hp[1]))
                    .withTimeout(TIMEOUT)
                    .build());
        });
        RedisCommands<String, String> redis = c.sync();
        long max = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page =
                    redis.scan(cursor, ScanArgs.Builder.matches("disco:*:tok").limit(1000));
            for (String key : page.getKeys()) {
                List<String> f = redis.hmget(key, "epoch", "gen", "seq").stream()
                        .map(v -> v.getValueOrElse(null))
                        .toList();
                if (f.get(0) != null && f.get(1) != null && f.get(2) != null) {
                    max = Math.max(
                            max,
                            Long.parseLong(f.get(0)) << 43 | Long.parseLong(f.get(1)) << 32 | Long.parseLong(f.get(2)));
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
        return max;
    }
}

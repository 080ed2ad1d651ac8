package io.disco.examples;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.redis.RedisKeys;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.KeyValue;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The bound the demo's resources confirm tokens with on Redis, the demo's own (the library has no {@code IssuedBound}
 * for Redis: docs/redis.md says why): the highest token recorded in any name's token record
 * {@code disco:{<name>}:tok} ({@code epoch}, {@code gen}, {@code seq}, the token being
 * {@code epoch << 43 | gen << 32 | seq}), read by a {@code SCAN} of the records. Every record only grows and is never
 * deleted, so what is read after the call began is at least every token issued before it: sound on the demo's one
 * throwaway server, where no failover leaves tokens that a stale primary consumed below the bound.
 */
final class RedisDemoBound implements IssuedBound {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final StatefulRedisConnection<String, String> connection;

    RedisDemoBound(StatefulRedisConnection<String, String> connection) {
        this.connection = connection;
    }

    @Override
    public CompletionStage<FencingToken> current() {
        return CompletableFuture.supplyAsync(this::read).orTimeout(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private FencingToken read() {
        var redis = connection.sync();
        long max = 0;
        ScanArgs match = ScanArgs.Builder.matches(RedisKeys.PREFIX + "{*}:tok").limit(1000);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, match);
            for (String key : page.getKeys()) {
                List<KeyValue<String, String>> f = redis.hmget(key, "epoch", "gen", "seq");
                if (f.stream().allMatch(KeyValue::hasValue)) {
                    long token = Long.parseLong(f.get(0).getValue()) << 43
                            | Long.parseLong(f.get(1).getValue()) << 32
                            | Long.parseLong(f.get(2).getValue());
                    max = Math.max(max, token);
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
        return FencingToken.of(Math.max(1, max));
    }
}

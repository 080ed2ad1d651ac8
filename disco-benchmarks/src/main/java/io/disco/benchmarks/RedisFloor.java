package io.disco.benchmarks;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;

/**
 * The floor of the case "redis": the fewest Redis round trips that any correct lock with a fencing token needs, one
 * script call to acquire and one to release, on one Lettuce connection of its own. The acquire script takes the next
 * token from the name's counter ({@code INCR}) and sets the lock key, if absent, to the owner and that token with an
 * expiry ({@code SET NX PX}), answering the token, or nil when the key is there (a token is then used up, never
 * issued twice); the release script deletes the key if its value is still this acquisition's. Both keys share a hash
 * tag, as they would on a cluster. No waiting, no renewal, no loss detection: what is left when those are taken away.
 */
final class RedisFloor implements AutoCloseable {

    /** KEYS[1] the lock, KEYS[2] the token counter; ARGV[1] the owner, ARGV[2] the expiry in ms. */
    static final String ACQUIRE = "local t = redis.call('INCR', KEYS[2]) "
            + "if redis.call('SET', KEYS[1], ARGV[1] .. ':' .. t, 'NX', 'PX', ARGV[2]) then return t end "
            + "return false";

    /** KEYS[1] the lock; ARGV[1] the value this acquisition set. */
    static final String RELEASE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    private static final String EXPIRY_MS = "60000";

    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String acquire;
    private final String release;
    private final String[] lockKeys;
    private final String[] releaseKeys;
    private final String owner = UUID.randomUUID().toString();
    private long token;

    /** A connection of {@code client} to {@code uri}, with both scripts loaded; {@code name} is the lock's. */
    RedisFloor(RedisClient client, RedisURI uri, String name) {
        connection = client.connect(uri);
        redis = connection.sync();
        acquire = redis.scriptLoad(ACQUIRE);
        release = redis.scriptLoad(RELEASE);
        String tag = "{" + name + "}";
        lockKeys = new String[] {tag + ":lock", tag + ":token"};
        releaseKeys = new String[] {lockKeys[0]};
    }

    /** One script call: takes the lock with the next token, or fails if it is held. */
    long lock() {
        Long t = redis.evalsha(acquire, ScriptOutputType.INTEGER, lockKeys, owner, EXPIRY_MS);
        if (t == null) {
            throw new IllegalStateException("the floor's lock key is held: the floor does not wait");
        }
        token = t;
        return t;
    }

    /** One script call: deletes the lock key if it is still this acquisition's. */
    void unlock() {
        Long deleted = redis.evalsha(release, ScriptOutputType.INTEGER, releaseKeys, owner + ":" + token);
        if (deleted == null || deleted != 1) {
            throw new IllegalStateException("the floor's lock key was not this acquisition's");
        }
    }

    @Override
    public void close() {
        connection.close();
    }
}

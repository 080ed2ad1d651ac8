package io.disco.cli;

import io.disco.core.Primitive;
import io.disco.provider.redis.RedisKeys;
import io.lettuce.core.ScriptOutputType;
import java.util.Optional;

/**
 * Which primitive a name is claimed as on Redis, told from its keys (the layout is the provider's {@link RedisKeys}):
 * each claim {@code disco:{<name>}:c:<id>} records its kind ({@code x} lock, {@code e} election candidate, {@code r}
 * reader and {@code w} writer of a read/write lock, {@code p} semaphore permit); without a live claim, the token record
 * {@code disco:{<name>}:tok} tells a semaphore (its {@code limit}) or a read/write lock (the read phase's token,
 * {@code phase}), and an election's log {@code disco:{<name>}:log} an election.
 */
final class RedisLayout {

    /**
     * Reads the kind of the first live claim in the queue, else the record's markers, in one snapshot. KEYS: the queue,
     * the token record, the log; ARGV: the start of the claim keys ({@code disco:{<name>}:c:}).
     */
    private static final String DETECT = """
            for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
              local k = redis.call('HGET', ARGV[1] .. m, 'kind')
              if k then return k end
            end
            local t = redis.call('HMGET', KEYS[2], 'limit', 'phase')
            if t[1] then return 'p' end
            if t[2] then return 'r' end
            if redis.call('EXISTS', KEYS[3]) == 1 then return 'e' end
            return ''
            """;

    private RedisLayout() {}

    /** @return the primitive of {@code name} from its keys, or empty when nothing of it tells */
    static Optional<Primitive> detect(Redis redis, String name) {
        String code = redis.eval(
                DETECT,
                ScriptOutputType.VALUE,
                "read of the keys of " + name,
                new String[] {RedisKeys.queue(name), RedisKeys.tokens(name), RedisKeys.log(name)},
                RedisKeys.prefix(name) + "c:");
        return kind(code);
    }

    /** @return the primitive a claim's {@code kind} field names, empty for anything else */
    static Optional<Primitive> kind(String code) {
        return switch (code == null ? "" : code) {
            case "x" -> Optional.of(Primitive.LOCK);
            case "e" -> Optional.of(Primitive.ELECTION);
            case "r", "w" -> Optional.of(Primitive.RWLOCK);
            case "p" -> Optional.of(Primitive.SEMAPHORE);
            default -> Optional.empty();
        };
    }

    /** @return why nothing holds or waits for {@code name} on Redis: the keys looked for, and how to look by hand */
    static String nothingHolds(String name) {
        return "nothing holds or waits for " + name + ": no claim in its queue " + RedisKeys.queue(name)
                + " and no marker of it (the limit or read phase in " + RedisKeys.tokens(name) + ", the log "
                + RedisKeys.log(name) + "); check the name (redis-cli --scan --pattern '" + RedisKeys.prefix(name)
                + "*')";
    }
}

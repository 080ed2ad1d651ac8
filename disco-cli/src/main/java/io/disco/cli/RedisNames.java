package io.disco.cli;

import io.disco.core.Primitive;
import io.disco.provider.redis.RedisKeys;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The keys of this library on Redis, by name: a {@code SCAN} of {@code disco:*} (never {@code KEYS}, which blocks the
 * server), each key parsed as {@code disco:{<name>}:<part>} ({@link RedisKeys}). For {@code disco list}, a name is in
 * use when it has a queue or a claim, or a marker in its token record (a semaphore's {@code limit}, a read phase's
 * token): such a name with no claimant is shown with 0 0, as etcd's markers are. A token record alone (every name ever
 * claimed keeps one: it is never deleted) and an election's log alone do not make a name in use.
 */
final class RedisNames {

    /** The parts of a name's keys. */
    enum Part {
        TOKENS,
        QUEUE,
        CLAIM,
        SLOTS,
        LOG,
        OTHER
    }

    /** One key of this library: its name, its part, and for a claim its id. */
    record Key(String key, String name, Part part, String claimId) {}

    private RedisNames() {}

    /** @return every key of this library, parsed, in key order, read by {@code SCAN} (each page within the timeout) */
    static List<Key> scan(Redis redis) {
        Set<String> keys = new TreeSet<>();
        ScanArgs match = ScanArgs.Builder.matches(RedisKeys.PREFIX + "{*").limit(1000);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.await(redis.commands().scan(cursor, match), "scan of the keys disco:*");
            keys.addAll(page.getKeys());
            cursor = page;
        } while (!cursor.isFinished());
        List<Key> out = new ArrayList<>();
        for (String k : keys) {
            parse(k).ifPresent(out::add);
        }
        return out;
    }

    /** @return {@code key} parsed as {@code disco:{<name>}:<part>}, empty when it is not of that shape */
    static Optional<Key> parse(String key) {
        String start = RedisKeys.PREFIX + "{";
        int end = key.lastIndexOf("}:");
        if (!key.startsWith(start) || end < start.length() + 1) {
            return Optional.empty();
        }
        String name = key.substring(start.length(), end);
        String rest = key.substring(end + 2);
        if (!key.startsWith(RedisKeys.prefix(name))) {
            return Optional.empty();
        }
        return Optional.of(
                switch (rest) {
                    case "tok" -> new Key(key, name, Part.TOKENS, null);
                    case "q" -> new Key(key, name, Part.QUEUE, null);
                    case "slots" -> new Key(key, name, Part.SLOTS, null);
                    case "log" -> new Key(key, name, Part.LOG, null);
                    default ->
                        rest.startsWith("c:") && rest.length() > 2
                                ? new Key(key, name, Part.CLAIM, rest.substring(2))
                                : new Key(key, name, Part.OTHER, null);
                });
    }

    /**
     * @param prefix a name, or {@code /} for every name
     * @return the names in use at or under {@code prefix} with their kinds, in name order
     */
    static Map<String, Primitive> under(Redis redis, String prefix) {
        boolean all = "/".equals(prefix);
        Set<String> candidates = new TreeSet<>();
        Set<String> records = new TreeSet<>();
        for (Key k : scan(redis)) {
            String n = k.name();
            if (!(all ? n.startsWith("/") : n.equals(prefix) || n.startsWith(prefix + "/"))) {
                continue;
            }
            switch (k.part()) {
                case QUEUE, CLAIM -> candidates.add(n);
                case TOKENS -> records.add(n);
                default -> {}
            }
        }
        for (String n : records) {
            if (!candidates.contains(n)) {
                List<String> markers = redis
                        .await(
                                redis.commands().hmget(RedisKeys.tokens(n), "limit", "phase"),
                                "read of the token record of " + n)
                        .stream()
                        .filter(v -> v.hasValue())
                        .map(v -> v.getKey())
                        .toList();
                if (!markers.isEmpty()) {
                    candidates.add(n);
                }
            }
        }
        Map<String, Primitive> names = new TreeMap<>();
        for (String n : candidates) {
            names.put(n, RedisLayout.detect(redis, n).orElse(Primitive.LOCK));
        }
        return names;
    }
}

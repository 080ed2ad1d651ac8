package io.disco.cli;

import io.disco.provider.redis.RedisKeys;
import io.disco.provider.redis.RedisSession;
import io.lettuce.core.ScriptOutputType;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code disco leftovers [PREFIX]} on Redis: what is left of this library's keys that should not be, under the names
 * starting with PREFIX. On Redis a claim lives exactly while its owner renews its key's TTL: a claim whose owner is
 * gone (its process died, froze, or lost Redis) expires by itself within that TTL, so a claim with a TTL is never a
 * leftover ({@code disco holders} shows its time left). What is left is what nothing will ever remove:
 * <ul>
 *   <li>{@code queue-entry}: a member of a name's queue {@code disco:{<name>}:q} whose claim key is gone (it expired,
 *       or was deleted by hand). It blocks nobody (every grant skips it, and removes it when it passes), but stays
 *       until the name's next grant;</li>
 *   <li>{@code claim-no-ttl}: a claim key without a TTL ({@code PTTL} -1): nothing expires it, and its owner, if it is
 *       still there, has already declared it lost (a renewal, {@code PEXPIRE ... XX}, fails on a key without a TTL),
 *       so it blocks the name's queue for ever. No owner of this library writes one: it was restored or changed by
 *       hand ({@code PERSIST}, {@code RESTORE}, a copy);</li>
 *   <li>{@code claim-unqueued}: a claim key that is not in its name's queue: no grant sees it, so others are admitted
 *       beside it while its owner, renewing it, believes it still holds. Made by hand (a {@code ZREM}, a deleted
 *       queue);</li>
 *   <li>{@code semaphore-slot}: a slot of {@code disco:{<name>}:slots} whose claim is gone: the next permit takes it
 *       over, but it stays until then.</li>
 * </ul>
 * The token record {@code disco:{<name>}:tok} is never a leftover: deleting it would let tokens start again low (a
 * semaphore's limit and the read phase's token are fields of it). Neither is an election's log, capped at about 64
 * entries.
 *
 * <p>{@code --delete} deletes each one guarded, in one script per leftover that checks it is still what was found: a
 * queue entry whose claim is still gone, a slot still held by a gone claim; a claim (without a TTL, or unqueued) is
 * broken as {@code disco break} breaks ({@link RedisSession#breakClaims}: its owner hears of it, the claims now
 * admitted are woken) after a script checked it is still one.
 */
final class RedisLeftovers {

    /** One key (or member, or field) nobody uses. */
    private record Leftover(String kind, String name, String key, String member, String why) {
        String shown() {
            return member == null ? key : key + " " + member;
        }
    }

    /** KEYS: the claim; ARGV: the claim's id. 1 when the claim exists without a TTL, or is not in the queue (KEYS[2]). */
    private static final String STILL_LEFT = """
            if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
            if ARGV[2] == 'ttl' then
              if redis.call('PTTL', KEYS[1]) == -1 then return 1 end
              return 0
            end
            if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
            return 1
            """;

    /** KEYS: the queue, the claim; ARGV: the member. Removes it when its claim is still gone. */
    private static final String QUEUE_ENTRY = """
            if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
            return redis.call('ZREM', KEYS[1], ARGV[1])
            """;

    /** KEYS: the slots, the claim; ARGV: the slot, the claim id. Frees the slot when still held by the gone claim. */
    private static final String SLOT = """
            if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
            return redis.call('HDEL', KEYS[1], ARGV[1])
            """;

    private final Redis redis;
    private final String prefix;
    private final List<Leftover> found = new ArrayList<>();

    private RedisLeftovers(Redis redis, String prefix) {
        this.redis = redis;
        this.prefix = prefix;
    }

    /** Lists what is left under {@code prefix}, and with {@code delete} deletes it. */
    static int run(Redis redis, String prefix, boolean delete, PrintWriter out) {
        RedisLeftovers l = new RedisLeftovers(redis, prefix);
        l.find();
        return l.report(delete, out);
    }

    private void find() {
        Map<String, Set<String>> claims = new HashMap<>();
        Set<String> queues = new HashSet<>();
        Set<String> slots = new HashSet<>();
        for (RedisNames.Key k : RedisNames.scan(redis)) {
            if (!k.name().startsWith(prefix)) {
                continue;
            }
            switch (k.part()) {
                case CLAIM ->
                    claims.computeIfAbsent(k.name(), n -> new HashSet<>()).add(k.claimId());
                case QUEUE -> queues.add(k.name());
                case SLOTS -> slots.add(k.name());
                default -> {}
            }
        }
        for (String name : queues) {
            List<String> members = redis.await(
                    redis.commands().zrange(RedisKeys.queue(name), 0, -1), "read of " + RedisKeys.queue(name));
            for (String m : members) {
                if (!claims.getOrDefault(name, Set.of()).contains(m) && !exists(RedisKeys.claim(name, m))) {
                    found.add(new Leftover(
                            "queue-entry",
                            name,
                            RedisKeys.queue(name),
                            m,
                            "its claim " + RedisKeys.claim(name, m) + " is gone (expired or deleted); it blocks"
                                    + " nobody, and goes with the name's next grant"));
                }
            }
        }
        for (Map.Entry<String, Set<String>> e : claims.entrySet()) {
            String name = e.getKey();
            for (String id : e.getValue()) {
                String key = RedisKeys.claim(name, id);
                if (stillLeft(name, id, "ttl")) {
                    found.add(new Leftover(
                            "claim-no-ttl",
                            name,
                            key,
                            null,
                            "no TTL: nothing expires it and no owner renews it (a renewal fails on a key without a"
                                    + " TTL), so it blocks " + name + " for ever; owner " + owner(key)));
                } else if (stillLeft(name, id, "queue")) {
                    found.add(new Leftover(
                            "claim-unqueued",
                            name,
                            key,
                            null,
                            "not in its queue " + RedisKeys.queue(name) + ": no grant sees it, so others are"
                                    + " admitted beside it; owner " + owner(key)));
                }
            }
        }
        for (String name : slots) {
            Map<String, String> held =
                    redis.await(redis.commands().hgetall(RedisKeys.slots(name)), "read of " + RedisKeys.slots(name));
            for (Map.Entry<String, String> s : held.entrySet()) {
                if (!exists(RedisKeys.claim(name, s.getValue()))) {
                    found.add(new Leftover(
                            "semaphore-slot",
                            name,
                            RedisKeys.slots(name),
                            s.getKey(),
                            "held by the claim " + RedisKeys.claim(name, s.getValue()) + ", which is gone; the"
                                    + " next permit takes it over"));
                }
            }
        }
    }

    private boolean exists(String key) {
        return redis.await(redis.commands().exists(key), "read of " + key) == 1;
    }

    private String owner(String key) {
        String o = redis.await(redis.commands().hget(key, "owner"), "read of " + key);
        try {
            return Long.toHexString(Long.parseLong(o));
        } catch (NumberFormatException e) {
            return "?";
        }
    }

    private boolean stillLeft(String name, String id, String why) {
        Long r = redis.eval(
                STILL_LEFT,
                ScriptOutputType.INTEGER,
                "read of " + RedisKeys.claim(name, id),
                new String[] {RedisKeys.claim(name, id), RedisKeys.queue(name)},
                id,
                why);
        return r != null && r == 1;
    }

    private int report(boolean delete, PrintWriter out) {
        if (found.isEmpty()) {
            out.println("no leftovers" + (prefix.isEmpty() ? "" : " under " + prefix));
            return ExitCode.OK;
        }
        List<Leftover> sorted =
                found.stream().sorted(Comparator.comparing(Leftover::shown)).toList();
        int width = sorted.stream().mapToInt(l -> l.shown().length()).max().orElse(3);
        String format = "%-15s  %-" + width + "s  %s%n";
        out.printf(format, "KIND", "KEY", "WHY");
        for (Leftover l : sorted) {
            out.printf(format, l.kind(), l.shown(), l.why());
        }
        if (!delete) {
            out.printf(
                    "%d leftover%s; --delete deletes %s%n",
                    found.size(), found.size() == 1 ? "" : "s", found.size() == 1 ? "it" : "them");
            return ExitCode.OK;
        }
        int deleted = 0;
        for (Leftover l : sorted) {
            if (delete(l)) {
                deleted++;
            } else {
                out.println("kept " + l.shown() + ": it changed since it was read");
            }
        }
        out.printf("deleted %d of %d leftover%s%n", deleted, found.size(), found.size() == 1 ? "" : "s");
        return ExitCode.OK;
    }

    private boolean delete(Leftover l) {
        switch (l.kind()) {
            case "queue-entry" -> {
                Long r = redis.eval(
                        QUEUE_ENTRY,
                        ScriptOutputType.INTEGER,
                        "guarded delete of " + l.shown(),
                        new String[] {l.key(), RedisKeys.claim(l.name(), l.member())},
                        l.member());
                return r != null && r == 1;
            }
            case "semaphore-slot" -> {
                String id = redis.await(redis.commands().hget(l.key(), l.member()), "read of " + l.shown());
                if (id == null) {
                    return false;
                }
                Long r = redis.eval(
                        SLOT,
                        ScriptOutputType.INTEGER,
                        "guarded delete of " + l.shown(),
                        new String[] {l.key(), RedisKeys.claim(l.name(), id)},
                        l.member(),
                        id);
                return r != null && r == 1;
            }
            default -> {
                String id = RedisKeys.parseClaim(l.key()).orElseThrow()[1];
                if (!stillLeft(l.name(), id, l.kind().equals("claim-no-ttl") ? "ttl" : "queue")) {
                    return false;
                }
                return !redis.provider(
                                () -> RedisSession.breakClaims(
                                        redis.connection(), l.name(), List.of(id), false, false, redis.timeout()),
                                "break of " + l.key())
                        .isEmpty();
            }
        }
    }
}

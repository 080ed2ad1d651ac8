package io.disco.provider.redis;

import io.disco.client.Names;
import java.util.Objects;
import java.util.Optional;

/**
 * The keys this library writes on Redis for a name: the one layout that the provider writes and the {@code disco}
 * tool reads (public for that tool, as {@code EtcdKeys} is on etcd and {@code ZooKeeperNodes} on ZooKeeper; it
 * follows the provider, so build nothing else on it). Every key of a name {@code n} starts with
 * {@code disco:{n}:}, whose hash tag (the text between the first <code>{</code> and the next <code>}</code>) keeps
 * them all in one Redis Cluster slot, so that one script can read and write them together:
 * <ul>
 *   <li>{@link #tokens} {@code disco:{n}:tok}, a hash: the name's token record ({@code epoch}, {@code gen},
 *       {@code seq}, {@code replid}), the queue's sequence ({@code qseq}), a semaphore's {@code limit}, the read
 *       phase's token of a read/write lock ({@code phase}), a double barrier's registration sequence ({@code dseq})
 *       and the last registration when it last opened ({@code dopen}). Never deleted: deleting it lets tokens start
 *       again low;</li>
 *   <li>{@link #queue} {@code disco:{n}:q}, a sorted set: claim id → position in the queue (strictly increasing per
 *       name);</li>
 *   <li>{@link #claim} {@code disco:{n}:c:<claim id>}, a hash with a TTL: one claim of one owner (its grant's
 *       {@code key()} is {@link #grantKey} {@code <n>/<claim id>}, as an etcd claim's is {@code <n>/<lease>}), fields
 *       {@code owner} (its owner's id, decimal), {@code kind} ({@code x} lock, {@code e} election candidate,
 *       {@code r} reader, {@code w} writer, {@code p} semaphore permit, {@code d} double barrier participant), {@code token} ({@code 0} while it waits,
 *       then {@code <epoch>:<gen>:<seq>}), {@code slot} (a permit's, else -1), {@code value} (a candidate's),
 *       {@code meta} (who claims, {@code ClaimMetadata}'s JSON), {@code since} (the server's time of the grant, ms).
 *       A claim is live exactly while this key exists: its owner renews its TTL;</li>
 *   <li>{@link #slots} {@code disco:{n}:slots}, a hash: a semaphore's slot index → the claim id that holds it;</li>
 *   <li>{@link #barrier} {@code disco:{n}:bar}, a string without TTL: the barrier {@code n}, up while it exists (its
 *       value: who raised it, {@code ClaimMetadata}'s JSON); it belongs to no owner;</li>
 *   <li>{@link #participants} {@code disco:{n}:dq}, a sorted set: a double barrier's participant id → its
 *       registration sequence; each participant is also a claim {@code disco:{n}:c:<id>} of kind {@code d}, counted
 *       while that key exists;</li>
 *   <li>{@link #log} {@code disco:{n}:log}, a stream: an election's terms and proclamations, capped at about 64;</li>
 *   <li>{@link #channel} {@code disco:{n}:ch}, a pub/sub channel: the ids of the waiting claims now admitted,
 *       {@code +log} when the log grew, {@code +b} when the barrier was lowered, {@code +d} when a double barrier
 *       opened or lost a participant;</li>
 *   <li>{@link #GONE_CHANNEL} {@code disco:gone}, one pub/sub channel for all names: {@code c <owner> <claim key>}
 *       when a claim was deleted behind its owner's back, {@code o <owner>} when an owner was ended from outside.</li>
 * </ul>
 */
public final class RedisKeys {

    /** Every key of this library starts with it. */
    public static final String PREFIX = "disco:";

    /** The channel of deletions made behind an owner's back (see the class description). */
    public static final String GONE_CHANNEL = "disco:gone";

    private RedisKeys() {}

    /**
     * The name rule of every backend and of the client ({@code io.disco.client.Names}).
     *
     * @param name a primitive's name
     * @return {@code name}
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or otherwise invalid
     */
    public static String checkName(String name) {
        return Names.check(name);
    }

    /**
     * @param name a primitive's name
     * @return the start of every key of the name: {@code disco:{<name>}:}
     */
    public static String prefix(String name) {
        return PREFIX + "{" + Objects.requireNonNull(name, "name") + "}:";
    }

    /**
     * @param name a primitive's name
     * @return the token record {@code disco:{<name>}:tok}
     */
    public static String tokens(String name) {
        return prefix(name) + "tok";
    }

    /**
     * @param name a primitive's name
     * @return the queue {@code disco:{<name>}:q}
     */
    public static String queue(String name) {
        return prefix(name) + "q";
    }

    /**
     * @param name a primitive's name
     * @param claimId a claim's id
     * @return the claim's key {@code disco:{<name>}:c:<claimId>}
     */
    public static String claim(String name, String claimId) {
        return prefix(name) + "c:" + claimId;
    }

    /**
     * @param name a semaphore's name
     * @return its slots {@code disco:{<name>}:slots}
     */
    public static String slots(String name) {
        return prefix(name) + "slots";
    }

    /**
     * @param name a barrier's name
     * @return its key {@code disco:{<name>}:bar}
     */
    public static String barrier(String name) {
        return prefix(name) + "bar";
    }

    /**
     * @param name a double barrier's name
     * @return its participants {@code disco:{<name>}:dq}
     */
    public static String participants(String name) {
        return prefix(name) + "dq";
    }

    /**
     * @param name an election's name
     * @return its log {@code disco:{<name>}:log}
     */
    public static String log(String name) {
        return prefix(name) + "log";
    }

    /**
     * @param name a primitive's name
     * @return its channel {@code disco:{<name>}:ch}
     */
    public static String channel(String name) {
        return prefix(name) + "ch";
    }

    /**
     * The key a grant (and the listing of claimants) reports for a claim: {@code <name>/<claim id>}, as etcd's keys
     * are {@code <name>/<lease>}; the claim's Redis key is {@link #claim}{@code (name, claimId)}.
     *
     * @param name a primitive's name
     * @param claimId a claim's id
     * @return {@code <name>/<claimId>}
     */
    public static String grantKey(String name, String claimId) {
        return Objects.requireNonNull(name, "name") + "/" + claimId;
    }

    /**
     * The name and claim id of a claim, from its grant key ({@link #grantKey}) or its Redis key ({@link #claim}).
     *
     * @param key a grant key or a claim's Redis key
     * @return {name, claim id}, or empty if {@code key} is neither
     */
    public static Optional<String[]> parseClaim(String key) {
        if (key == null) {
            return Optional.empty();
        }
        if (!key.startsWith(PREFIX + "{")) {
            int slash = key.lastIndexOf('/');
            if (slash <= 0 || slash == key.length() - 1) {
                return Optional.empty();
            }
            String id = key.substring(slash + 1);
            return id.chars().allMatch(c -> Character.digit(c, 16) >= 0)
                    ? Optional.of(new String[] {key.substring(0, slash), id})
                    : Optional.empty();
        }
        int mark = key.lastIndexOf("}:c:");
        if (mark < PREFIX.length() + 1) {
            return Optional.empty();
        }
        String name = key.substring(PREFIX.length() + 1, mark);
        String id = key.substring(mark + 4);
        if (name.isEmpty() || id.isEmpty() || id.contains(":")) {
            return Optional.empty();
        }
        return Optional.of(new String[] {name, id});
    }
}

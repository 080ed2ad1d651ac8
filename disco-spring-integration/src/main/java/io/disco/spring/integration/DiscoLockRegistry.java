package io.disco.spring.integration;

import io.disco.client.Disco;
import io.disco.client.Names;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Spring Integration's {@link org.springframework.integration.support.locks.LockRegistry} over a disco
 * client: a drop-in replacement for {@code RedisLockRegistry} or {@code JdbcLockRegistry} (one bean)
 * whose locks carry a fencing token and are kept by the client's lease instead of a guessed TTL.
 *
 * <pre>{@code
 * @Bean
 * DiscoLockRegistry lockRegistry(Disco disco) {
 *     return new DiscoLockRegistry(disco, "/myapp/locks");
 * }
 *
 * DiscoLock lock = registry.obtain("order-42");
 * lock.lock();
 * try {
 *     orders.update(42, data, lock.token());  // the store rejects a token lower than one it has seen
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Keys.</b> A key is a non-blank {@code String}; its lock is the client's lock named
 *       {@code prefix + "/" + Names.segment(key)}: {@code '%'} and {@code '/'} in the key are written {@code %25}
 *       and {@code %2F} (so that no key is nested in another: {@code etcdctl get --prefix prefix/} lists them),
 *       and so is any character the name rule refuses (a control character, {@code %uXXXX} for one outside
 *       U+00FF), as are the dots of a key that is {@code .} or {@code ..}; so every key works, on every backend
 *       (see {@link io.disco.client.Names#segment(String)}). {@link #obtain(Object)} returns the same
 *       {@link DiscoLock} for a key until it is expired.</li>
 *   <li><b>Locks.</b> Per thread and reentrant; see {@link DiscoLock} for the token, what a lost hold does,
 *       and the exceptions (those of Spring's own registries).</li>
 *   <li><b>Leader election.</b> {@code LockRegistryLeaderInitiator} works on it: it re-acquires its lock
 *       every heartbeat, and a reentrant {@code tryLock} of a lost hold returns false, which it takes as
 *       revoked; it then competes again, with a new hold and token.</li>
 *   <li><b>Expiry.</b> {@link #expireUnusedOlderThan(long)} forgets the locks of keys that no thread holds or
 *       acquires and that were last used at least {@code age} ms ago (a negative age: every idle lock, as with
 *       Spring's Redis, JDBC and ZooKeeper registries). It frees this registry's memory only: the client keeps
 *       nothing in etcd (no key, no watch) for a name nobody holds.</li>
 *   <li><b>Renewal.</b> Nothing to renew: the client's lease keeps every hold alive for as long as the
 *       process is, and a hold ends by {@code unlock()} or by the loss of the lease, never on a clock.
 *       {@link #renewLock(Object)} checks that the current thread holds the key's lock
 *       ({@link IllegalMonitorStateException} otherwise, as {@code Lock.unlock()} says) and that the hold is
 *       valid ({@link IllegalStateException} otherwise, as Spring's registries throw when a renewal fails); the
 *       TTL of {@link #renewLock(Object, Duration)} is not used (see there).</li>
 * </ul>
 *
 * <h2>Who closes what</h2>
 * The registry holds nothing of its own: it never closes the {@link Disco} client, which the application
 * owns (closing the client releases every hold).
 */
public final class DiscoLockRegistry implements ExpirableLockRegistry<DiscoLock>, RenewableLockRegistry<DiscoLock> {

    /** The prefix of {@link #DiscoLockRegistry(Disco)}. */
    public static final String DEFAULT_PREFIX = "/spring-integration/locks";

    private final Disco disco;
    private final String prefix;
    private final ConcurrentMap<String, RegistryLock> locks = new ConcurrentHashMap<>();

    /**
     * A registry whose locks are named under {@link #DEFAULT_PREFIX}.
     *
     * @param disco the client to lock through; the registry never closes it
     */
    public DiscoLockRegistry(Disco disco) {
        this(disco, DEFAULT_PREFIX);
    }

    /**
     * A registry whose locks are named under {@code prefix}.
     *
     * @param disco the client to lock through; the registry never closes it
     * @param prefix the names' prefix, such as {@code /myapp/locks}: a disco name ({@link Names}), not used by
     *               anything else of the application
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code prefix} is not a disco name
     */
    public DiscoLockRegistry(Disco disco, String prefix) {
        this.disco = Objects.requireNonNull(disco, "disco");
        this.prefix = Names.check(prefix, "prefix");
    }

    /**
     * The lock of {@code lockKey}; holds nothing until a thread locks it.
     *
     * @param lockKey the key, a non-blank {@code String}
     * @return the key's lock, the same one for every call until it is expired
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}, or is blank
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public DiscoLock obtain(Object lockKey) {
        String key = key(lockKey);
        RegistryLock lock = locks.computeIfAbsent(key, k -> new RegistryLock(k, disco.lock(prefix + "/" + escape(k))));
        lock.touch();
        return lock;
    }

    private static String key(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException(
                    "lockKey must be a String, got a " + lockKey.getClass().getName());
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("lockKey must not be blank, got '" + key + "'");
        }
        return key;
    }

    /** The key as one segment of a name: never nested, never refused ({@link Names#segment(String)}). */
    static String escape(String key) {
        return Names.segment(key);
    }

    /**
     * Forgets the locks no thread holds or acquires and that were last obtained, acquired or released
     * at least {@code age} ms ago; a later {@link #obtain(Object)} of such a key returns a new lock (on
     * the same distributed lock). Zero or a negative age forgets every such lock now, as Spring's Redis,
     * JDBC and ZooKeeper registries do.
     *
     * @param age the idle time in milliseconds; zero or less: every lock nobody holds or acquires
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        locks.values().removeIf(lock -> lock.idleFor(age, now)); // a negative age: every idle lock, whatever the clock
    }

    /**
     * Checks that the current thread holds {@code lockKey}'s lock and that the hold is valid; there is
     * nothing to extend, since the client's lease keeps the hold alive.
     *
     * @param lockKey the key
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey} is not a non-blank {@code String}
     * @throws IllegalMonitorStateException if the current thread does not hold the lock (as
     *         {@code java.util.concurrent.locks.Lock} and Spring's JDBC registry say)
     * @throws IllegalStateException if the hold was lost (as Spring's registries throw when a renewal fails)
     */
    @Override
    public void renewLock(Object lockKey) {
        String key = key(lockKey);
        RegistryLock lock = locks.get(key);
        if (lock == null || !lock.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException(
                    "could not renew the lock '" + key + "': this thread does not hold it");
        }
        if (!lock.isValidlyHeldByCurrentThread()) {
            throw new IllegalStateException(
                    "could not renew the lock '" + key + "': its hold was lost (its lease ended)");
        }
        lock.touch();
    }

    /**
     * As {@link #renewLock(Object)}. The TTL is not used: a hold does not end on a clock but when it is
     * released or its lease is lost, and the lease's TTL (the client's, for every hold) bounds how long a
     * dead or cut-off process keeps it.
     *
     * @param lockKey the key
     * @param ttl positive; not used
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code ttl} is not positive, or {@code lockKey} is not a non-blank
     *         {@code String}
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws IllegalStateException if the hold was lost
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        renewLock(lockKey);
    }

    @Override
    public String toString() {
        return "DiscoLockRegistry['" + prefix + "' on " + disco + "]";
    }
}

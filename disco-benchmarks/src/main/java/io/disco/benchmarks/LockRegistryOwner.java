package io.disco.benchmarks;

import io.disco.benchmarks.Contention.Owner;
import io.lettuce.core.resource.ClientResources;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * One owner of Spring Integration's {@code RedisLockRegistry} in the case "redis", as an application has it: a
 * Spring Data Redis {@link LettuceConnectionFactory} of its own (its own Lettuce {@code RedisClient} on the case's
 * shared {@link ClientResources}; by default one shared connection, plus one for pub/sub in {@link
 * RedisLockType#PUB_SUB_LOCK}) and a registry on it, everything else left at the registry's defaults (60 s expiry,
 * no renewal, 100 ms between the spin lock's tries). Its executor (for {@code unlock()} and the pub/sub listener) is
 * the one the registry makes by default, a cached thread pool, but given to it, so that it is shut down after the
 * listener's connection is closed: the registry's own {@code destroy()} shuts its pool down first, and a message still
 * on its way (another owner's release) is then refused with an error in the log.
 */
final class LockRegistryOwner implements AutoCloseable {

    /** The key, under the registry's prefix, that {@link #startListening} finds held. */
    static final String HELD_KEY = "held-by-the-case";

    private final LettuceConnectionFactory factory;
    private final RedisLockRegistry registry;
    private final ExecutorService executor =
            Executors.newCachedThreadPool(new CustomizableThreadFactory("redis-lock-registry-"));

    /**
     * @param type the registry's mode, or null for its default (not set: {@link RedisLockType#SPIN_LOCK} in Spring
     *     Integration 7.0)
     */
    private LockRegistryOwner(
            String host,
            int port,
            ClientResources resources,
            RedisRequests requests,
            String registryKey,
            RedisLockType type) {
        factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(host, port),
                LettuceClientConfiguration.builder().clientResources(resources).build());
        factory.afterPropertiesSet();
        factory.start();
        requests.count(factory.getRequiredNativeClient()); // before its first connection
        registry = new RedisLockRegistry(factory, registryKey);
        registry.setExecutor(executor);
        if (type != null) {
            registry.setRedisLockType(type);
        }
    }

    /**
     * Opens an owner of the lock {@code key} of the registry {@code registryKey} and takes and gives back the lock once
     * (its connection opened, the scripts loaded); in {@link RedisLockType#PUB_SUB_LOCK} it also tries {@link #HELD_KEY}
     * for a millisecond, which the caller keeps held, so that its listener container is subscribed before it is
     * measured: a running application pays for both once.
     */
    static Owner open(
            String host,
            int port,
            ClientResources resources,
            RedisRequests requests,
            String registryKey,
            RedisLockType type,
            String key)
            throws InterruptedException {
        LockRegistryOwner o = new LockRegistryOwner(host, port, resources, requests, registryKey, type);
        try {
            Lock lock = o.registry.obtain(key);
            lock.lock();
            lock.unlock();
            if (type == RedisLockType.PUB_SUB_LOCK) {
                o.startListening();
            }
            return new Owner(lock::lock, lock::unlock, o);
        } catch (RuntimeException | InterruptedException e) {
            o.close();
            throw e;
        }
    }

    private void startListening() throws InterruptedException {
        Lock held = registry.obtain(HELD_KEY);
        if (held.tryLock(1, TimeUnit.MILLISECONDS)) {
            held.unlock();
            throw new IllegalStateException("'" + HELD_KEY + "' should be held by the case, it was free");
        }
    }

    @Override
    public void close() {
        try {
            registry.destroy();
        } finally {
            try {
                factory.destroy();
            } finally {
                executor.shutdown();
            }
        }
    }
}

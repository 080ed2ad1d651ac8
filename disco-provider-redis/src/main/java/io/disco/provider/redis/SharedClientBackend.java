package io.disco.provider.redis;

import io.disco.client.DiscoBackend;
import java.time.Duration;

/**
 * The client's backend on the application's Lettuce client ({@link RedisProvider}): an owner is a
 * {@link RedisSession} opened on that client's deployment, with connections of its own, closed with it. After a loss
 * the client opens the next one the same way.
 */
final class SharedClientBackend implements DiscoBackend {

    private final Deployment deployment;
    private final RedisOptions options;

    SharedClientBackend(Deployment deployment, RedisOptions options) {
        this.deployment = deployment;
        this.options = options;
    }

    /**
     * @return the owner: a new session
     * @throws io.disco.fencing.DiscoException if Redis could not be reached in time, or refuses (the start check)
     */
    @Override
    public Owner open() {
        return RedisSession.open(deployment, options);
    }

    @Override
    public String describe() {
        return deployment.describe();
    }

    /** The options' owner wait; by default the TTL. */
    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElse(options.ttl());
    }

    @Override
    public String toString() {
        return describe();
    }
}

/**
 * disco on Redis, through Lettuce: {@link io.disco.provider.redis.RedisProvider} makes an application's client on its
 * {@code RedisClient} (standalone or Sentinel-managed) or {@code RedisClusterClient};
 * {@link io.disco.provider.redis.RedisSession} is one owner, whose claims live while it renews them;
 * {@link io.disco.provider.redis.RedisDiscoBackend} is the backend with the test hooks. Every key of a name shares one
 * hash tag ({@link io.disco.provider.redis.RedisKeys}, public for the {@code disco} tool); Lua scripts queue, admit and
 * delete claims atomically per name, and assign tokens ({@code epoch | generation | sequence}) that never go back
 * across a restart (AOF {@code always}) or a failover (the promotion's epoch, agreed outside the data); where that
 * cannot be shown, a grant fails closed with {@link io.disco.provider.redis.UnsafeTokenException}.
 *
 * <p>Inside, one concept per file, in the ZooKeeper provider's shape: the public {@code RedisSession} is a front over
 * {@code SessionCore}, all a service sees of its session, which wires {@code Link} (its connections, from a
 * {@code Deployment}), {@code SessionStatus}, {@code Liveness} (renewal rounds and the deadline),
 * {@code Wakeups} (pub/sub), {@code TokenLineage}, {@code SessionExecutors} and {@code ServiceRegistry}. The services
 * share {@code RedisQueueService} on disco-core's internal {@code GrantLedger}, whose hooks here are
 * {@code QueueClaim}, {@code HeldClaim} and {@code ClaimRelease}, with {@code GrantRelease} and {@code GrantLoss};
 * an acquisition is run by a {@code ClaimWorker} (each request a {@code GrantStep}) and waited for by a
 * {@code QueueCaller}; a primitive supplies only its {@code ClaimProtocol} hooks, admission being the scripts'
 * ({@code Scripts}, by {@code ClaimKind}).
 */
package io.disco.provider.redis;

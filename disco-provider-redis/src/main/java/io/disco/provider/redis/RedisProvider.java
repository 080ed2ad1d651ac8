package io.disco.provider.redis;

import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.Objects;

/**
 * Entry point of an application on Redis: its client ({@link Disco}) on the application's Lettuce client, as
 * {@code EtcdProvider.disco} is on its jetcd {@code Client}: a {@code RedisClient} with the {@code RedisURI} of a
 * standalone server or of a Sentinel-managed master (the URI names the sentinels and the master), or a
 * {@code RedisClusterClient}.
 *
 * <p>The client holds one owner at a time, a {@link RedisSession}; after a loss it opens the next one. Every session
 * opening runs the start check: Redis 7.0 or later, {@code appendonly yes} with {@code appendfsync always} (so a
 * restart keeps every token), no {@code allkeys-*} eviction; a refusal names the setting to change or the option
 * that opts out ({@link RedisOptions.Builder#unsafeWithoutDurableTokens},
 * {@link RedisOptions.Builder#persistenceCheckedElsewhere} when {@code CONFIG} is not allowed). Tokens never go back
 * across a restart or a failover; where the backend cannot show that, it refuses to grant
 * ({@link UnsafeTokenException}). Redis is not a consensus system: during a failover two owners can both believe they
 * hold a lock for a while; their tokens still tell them apart at a fenced resource (docs/redis.md).
 *
 * <h2>Who closes what</h2>
 * The Lettuce client and its {@code ClientResources} belong to the application, which shuts them down after the
 * disco client: each session opens and closes only its own connections (a multiplexed one, a pub/sub one, and a few
 * grant connections when grants wait for replica acknowledgements), and its close returns once they are closed (at
 * most 2 s; Lettuce closes them asynchronously), so the client's shutdown just after it has none of them to close
 * again. For tests, demos and fault runs see
 * {@link RedisDiscoBackend}.
 */
public final class RedisProvider {

    private RedisProvider() {}

    /**
     * The client of an application on a standalone or Sentinel-managed Redis: create it once, share it between
     * threads, close it at shutdown (see {@link Disco} for the contract).
     *
     * @param client the application's Lettuce client; never shut down by the returned client
     * @param uri the server, or the sentinels and the master's name
     * @param options every session's TTL, acknowledgements, timeouts, callback executor, listeners and opt-outs
     * @return the client, with its first session open; close it before shutting the Lettuce client down
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses the server's settings (the message names them)
     * @throws io.disco.fencing.DiscoException if Redis could not be reached within the connect timeout
     */
    public static Disco disco(RedisClient client, RedisURI uri, RedisOptions options) {
        return disco(client, uri, options, DiscoOptions.defaults());
    }

    /**
     * {@link #disco(RedisClient, RedisURI, RedisOptions)} with the client's backend-neutral options.
     *
     * @param client the application's Lettuce client; never shut down by the returned client
     * @param uri the server, or the sentinels and the master's name
     * @param options every session's options
     * @param discoOptions the client's own options
     * @return the client, with its first session open
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses the server's settings
     * @throws io.disco.fencing.DiscoException if Redis could not be reached within the connect timeout
     */
    public static Disco disco(RedisClient client, RedisURI uri, RedisOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.over(backend(Deployment.of(client, uri), options), discoOptions);
    }

    /**
     * The client of an application on a Redis Cluster: every key of one name lives in one slot (hash tags).
     *
     * @param client the application's Lettuce cluster client; never shut down by the returned client
     * @param options every session's options
     * @return the client, with its first session open
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses a primary's settings
     * @throws io.disco.fencing.DiscoException if Redis could not be reached within the connect timeout
     */
    public static Disco disco(RedisClusterClient client, RedisOptions options) {
        return disco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #disco(RedisClusterClient, RedisOptions)} with the client's backend-neutral options.
     *
     * @param client the application's Lettuce cluster client; never shut down by the returned client
     * @param options every session's options
     * @param discoOptions the client's own options
     * @return the client, with its first session open
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses a primary's settings
     * @throws io.disco.fencing.DiscoException if Redis could not be reached within the connect timeout
     */
    public static Disco disco(RedisClusterClient client, RedisOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.over(backend(Deployment.of(client), options), discoOptions);
    }

    /**
     * Like {@link #disco(RedisClient, RedisURI, RedisOptions)}, but for an application that must start while Redis
     * is down: if the first session cannot be opened, the client is returned anyway, healing, and opens it in the
     * background as soon as Redis answers (see {@link Disco#healing}).
     *
     * @param client the application's Lettuce client
     * @param uri the server, or the sentinels and the master's name
     * @param options every session's options
     * @return the client, up or healing
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(RedisClient client, RedisURI uri, RedisOptions options) {
        return healingDisco(client, uri, options, DiscoOptions.defaults());
    }

    /**
     * {@link #healingDisco(RedisClient, RedisURI, RedisOptions)} with the client's backend-neutral options.
     *
     * @param client the application's Lettuce client
     * @param uri the server, or the sentinels and the master's name
     * @param options every session's options
     * @param discoOptions the client's own options
     * @return the client, up or healing
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(
            RedisClient client, RedisURI uri, RedisOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.healing(backend(Deployment.of(client, uri), options), discoOptions);
    }

    /**
     * Like {@link #disco(RedisClusterClient, RedisOptions)}, but healing while Redis is down.
     *
     * @param client the application's Lettuce cluster client
     * @param options every session's options
     * @return the client, up or healing
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(RedisClusterClient client, RedisOptions options) {
        return healingDisco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #healingDisco(RedisClusterClient, RedisOptions)} with the client's backend-neutral options.
     *
     * @param client the application's Lettuce cluster client
     * @param options every session's options
     * @param discoOptions the client's own options
     * @return the client, up or healing
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(RedisClusterClient client, RedisOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.healing(backend(Deployment.of(client), options), discoOptions);
    }

    private static SharedClientBackend backend(Deployment deployment, RedisOptions options) {
        Objects.requireNonNull(options, "options");
        return new SharedClientBackend(deployment, options);
    }
}

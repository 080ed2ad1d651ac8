package io.disco.provider.zookeeper;

import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * Entry point of an application on ZooKeeper: its client ({@link Disco}) on the application's one
 * {@code CuratorFramework}, as {@code EtcdProvider.disco} is on its jetcd {@code Client}.
 *
 * <p>The client holds one owner at a time, a {@link ZooKeeperSession} on the {@code CuratorFramework}'s ZooKeeper
 * session (its session timeout is the owner's TTL). After a loss it opens the next one on the same
 * {@code CuratorFramework}: on the new ZooKeeper session Curator makes after an expiry, or on the same one when the
 * loss was only declared by this library (2/3 of the timeout without an answer) and the server kept the session;
 * what the lost owner held is then deleted in the background. Curator's connection handling, retry policy, ensemble
 * tracker, ACLs, authentication and TLS are the application's, as it built the client.
 *
 * <h2>Who closes what</h2>
 * The {@code CuratorFramework} belongs to the application, which starts it before and closes it after the client:
 * the client never closes it ({@link Disco#close()} closes its session, releasing what it holds, and leaves the
 * {@code CuratorFramework} open for the application's other uses). A {@code CuratorFramework} closed first is
 * detected: the client stops at once, saying so. For tests, demos and fault runs, whose owners need clients of
 * their own, see {@link ZooKeeperDiscoBackend}.
 */
public final class ZooKeeperProvider {

    private ZooKeeperProvider() {}

    /**
     * The client of an application on ZooKeeper: create it once, share it between threads, close it at shutdown
     * (see {@link Disco} for the contract). Its locks, read/write locks, semaphores and elections are those of
     * {@link ZooKeeperSession}, on Curator's node names, so they contend with Curator's recipes on the same path.
     *
     * @param client the application's started {@code CuratorFramework}; never closed by the returned client
     * @param options every session's timeouts, callback executor, owner wait, client id and listeners
     * @return the client, with its first session open; close it before the {@code CuratorFramework}
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if {@code client} is not started (or is closed)
     * @throws io.disco.fencing.DiscoException if ZooKeeper could not be reached within the connect timeout (the
     *     message names the connect string and, per server, why)
     */
    public static Disco disco(CuratorFramework client, ZooKeeperOptions options) {
        return disco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #disco(CuratorFramework, ZooKeeperOptions)} with the client's backend-neutral options: its observers of
     * acquisitions and holds (for example {@code DiscoObservations.of(observationRegistry)} of disco-micrometer).
     *
     * @param client the application's started {@code CuratorFramework}; never closed by the returned client
     * @param options every session's timeouts, callback executor, owner wait, client id and listeners
     * @param discoOptions the client's own options
     * @return the client, with its first session open; close it before the {@code CuratorFramework}
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if {@code client} is not started (or is closed)
     * @throws io.disco.fencing.DiscoException if ZooKeeper could not be reached within the connect timeout
     */
    public static Disco disco(CuratorFramework client, ZooKeeperOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.over(backend(client, options), discoOptions);
    }

    /**
     * Like {@link #disco(CuratorFramework, ZooKeeperOptions)}, but for an application that must start while
     * ZooKeeper is down: if the first session cannot be opened (within the connect timeout), the client is returned
     * anyway, {@linkplain io.disco.client.DiscoStatus.State#HEALING healing}, and opens its session in the background
     * as soon as ZooKeeper answers (see {@link Disco#healing}).
     *
     * @param client the application's started {@code CuratorFramework}; never closed by the returned client
     * @param options every session's timeouts, callback executor, owner wait, client id and listeners
     * @return the client, up or healing; close it before the {@code CuratorFramework}
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if {@code client} is not started (or is closed)
     */
    public static Disco healingDisco(CuratorFramework client, ZooKeeperOptions options) {
        return healingDisco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #healingDisco(CuratorFramework, ZooKeeperOptions)} with the client's backend-neutral options: its
     * observers of acquisitions and holds.
     *
     * @param client the application's started {@code CuratorFramework}; never closed by the returned client
     * @param options every session's timeouts, callback executor, owner wait, client id and listeners
     * @param discoOptions the client's own options
     * @return the client, up or healing; close it before the {@code CuratorFramework}
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if {@code client} is not started (or is closed)
     */
    public static Disco healingDisco(CuratorFramework client, ZooKeeperOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.healing(backend(client, options), discoOptions);
    }

    private static SharedClientBackend backend(CuratorFramework client, ZooKeeperOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        CuratorFrameworkState state = client.getState();
        if (state != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException("the CuratorFramework is " + state
                    + (state == CuratorFrameworkState.LATENT
                            ? ": start it (client.start()) before making the disco client on it"
                            : ": it was closed; the disco client needs an open one"));
        }
        return new SharedClientBackend(client, options);
    }
}

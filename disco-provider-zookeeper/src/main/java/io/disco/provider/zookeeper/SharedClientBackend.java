package io.disco.provider.zookeeper;

import io.disco.client.DiscoBackend;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * The client's backend on the application's one {@code CuratorFramework} ({@link ZooKeeperProvider}): an owner is a
 * {@link ZooKeeperSession} opened on that client, whatever ZooKeeper session the client is on at the time. After a
 * loss the client opens the next owner on the same {@code CuratorFramework}: on the new ZooKeeper session Curator
 * made after an expiry, or on the same one when only this library declared the loss (its deadline passed while the
 * server kept the session), the lost owner's nodes then deleted in the background ({@code GrantLoss}). It never
 * closes the {@code CuratorFramework}, and tells the client when the application closed it first.
 */
final class SharedClientBackend implements DiscoBackend {

    private final CuratorFramework client;
    private final ZooKeeperOptions options;

    SharedClientBackend(CuratorFramework client, ZooKeeperOptions options) {
        this.client = client;
        this.options = options;
    }

    /**
     * Opens a session on the client, waiting at most the options' connect timeout for it to connect.
     *
     * @return the owner: the session
     * @throws io.disco.fencing.DiscoException if ZooKeeper could not be reached in time (the message names the
     *     connect string and, per server, why)
     * @throws IllegalStateException if the application closed the client
     */
    @Override
    public Owner open() {
        return ZooKeeperSession.open(client, options);
    }

    @Override
    public String describe() {
        return "ZooKeeper at " + client.getZookeeperClient().getCurrentConnectionString();
    }

    /**
     * The options' owner wait; by default the session timeout ZooKeeper negotiated with the client, or, when the
     * client has not connected yet (a client made healing while ZooKeeper is down), {@link DiscoBackend}'s default
     * of 30 s: ZooKeeper's handle tells the timeout it asked for only once the server answered.
     */
    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElseGet(() -> {
            int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
            return negotiated > 0 ? Duration.ofMillis(negotiated) : DiscoBackend.super.ownerWait();
        });
    }

    /** The application closed its {@code CuratorFramework} while the client was open: the reason, naming the right order. */
    @Override
    public Optional<String> clientClosed() {
        return client.getState() == CuratorFrameworkState.STOPPED
                ? Optional.of(SessionLiveness.CLOSED_FIRST)
                : Optional.empty();
    }

    @Override
    public String toString() {
        return describe();
    }
}

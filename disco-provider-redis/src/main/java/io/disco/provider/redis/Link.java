package io.disco.provider.redis;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One session's connections to Redis ({@link Deployment#connect}): the multiplexed connection every request of the
 * session shares (scripts, renewals, reads), the pub/sub connection its waits listen on ({@code Wakeups}), and a
 * small pool of grant connections ({@link Grantor}), opened when first needed: a grant that must wait for replica
 * acknowledgements runs its script and then {@code WAIT} on one of them, since {@code WAIT} blocks its connection and
 * must follow the grant's write on the same one. Closing the link closes them all and waits for them
 * ({@link ConnectionClose}); the Lettuce client is the application's.
 */
abstract class Link implements AutoCloseable {

    /**
     * A grant connection, held by one acquisition at a time: for a name, the commands of the connection to the
     * name's primary.
     */
    static final class Grantor implements AutoCloseable {
        private final Function<String, Node> forName;
        private final Supplier<CompletableFuture<Void>> close;

        Grantor(Function<String, Node> forName, Supplier<CompletableFuture<Void>> close) {
            this.forName = forName;
            this.close = close;
        }

        /** @return the connection to {@code name}'s primary, and its node id ("" outside a Cluster) */
        Node node(String name) {
            return forName.apply(name);
        }

        /** Closes the connection, without waiting. */
        @Override
        public void close() {
            close.get();
        }

        /** @return the close of the connection, sent */
        CompletableFuture<Void> closeAsync() {
            return close.get();
        }
    }

    /**
     * One connection to one server: its node id in a Cluster ("" outside one) and its commands.
     *
     * @param id the Cluster node id, or ""
     * @param commands the connection's commands
     */
    record Node(String id, RedisClusterAsyncCommands<String, String> commands) {}

    /** At most this many grant connections are kept open for reuse. */
    private static final int POOL = 4;

    private final RedisClusterAsyncCommands<String, String> commands;
    private final StatefulRedisPubSubConnection<String, String> pubsub;
    private final Supplier<CompletableFuture<Void>> closeMain;
    private final ConcurrentLinkedQueue<Grantor> idle = new ConcurrentLinkedQueue<>();
    private final List<Grantor> all = new ArrayList<>();
    private volatile boolean closed;

    Link(
            RedisClusterAsyncCommands<String, String> commands,
            StatefulRedisPubSubConnection<String, String> pubsub,
            Supplier<CompletableFuture<Void>> closeMain) {
        this.commands = commands;
        this.pubsub = pubsub;
        this.closeMain = closeMain;
    }

    /** @return the session's multiplexed connection (its futures complete on Lettuce's threads) */
    RedisClusterAsyncCommands<String, String> commands() {
        return commands;
    }

    /** @return the session's pub/sub connection */
    StatefulRedisPubSubConnection<String, String> pubsub() {
        return pubsub;
    }

    /** Opens a new grant connection within {@code timeout}. */
    abstract Grantor newGrantor(Duration timeout);

    /** @return a connection to every primary (one outside a Cluster), for the start check */
    abstract List<Node> primaries();

    /**
     * @return an idle grant connection, or a new one opened within {@code timeout}
     * @throws io.disco.fencing.DiscoException if none could be opened
     * @throws IllegalStateException if the link is closed
     */
    Grantor borrow(Duration timeout) {
        if (closed) {
            throw new IllegalStateException("the session's connections are closed");
        }
        Grantor g = idle.poll();
        if (g != null) {
            return g;
        }
        g = newGrantor(timeout);
        synchronized (all) {
            all.add(g);
            if (closed) {
                g.close();
                throw new IllegalStateException("the session's connections are closed");
            }
        }
        return g;
    }

    /** Returns {@code g} for reuse; closes it if the pool is full, {@code broken} (a request of it unanswered) or closed. */
    void giveBack(Grantor g, boolean broken) {
        if (!broken && !closed && idle.size() < POOL) {
            idle.add(g);
            return;
        }
        synchronized (all) {
            all.remove(g);
        }
        g.close();
    }

    @Override
    public void close() {
        closed = true;
        List<Grantor> toClose;
        synchronized (all) {
            toClose = new ArrayList<>(all);
            all.clear();
        }
        idle.clear();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Grantor g : toClose) {
            try {
                closing.add(g.closeAsync());
            } catch (RuntimeException e) {
                // closing anyway
            }
        }
        try {
            closing.add(pubsub.closeAsync());
        } finally {
            closing.add(closeMain.get());
        }
        ConnectionClose.await(closing);
    }
}

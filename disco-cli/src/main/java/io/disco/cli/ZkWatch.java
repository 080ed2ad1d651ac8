package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.Watcher;

/**
 * {@code disco watch NAME} on ZooKeeper: one line per change of who holds or waits, until interrupted, in the lines
 * of etcd's watch ({@link WatchCommand#line}). A persistent recursive watch on NAME (ZooKeeper 3.6+) only wakes it:
 * after each event, and every {@link LeaseClock#INTERVAL_MILLIS}, the claimants are listed again (the provider's
 * listing, as {@code disco holders}) and compared with the last listing.
 *
 * <p>As on etcd it waits on a name nobody holds, and outlives an unreachable ZooKeeper (said once on stderr, and when
 * it answers again; then the watch is set again, since a new session has none). A claimant that is gone is
 * {@code broken} when {@code disco break}'s record of its node exists, else {@code released} (a holder) or
 * {@code withdrew} (a waiter): ZooKeeper deletes a session's nodes when it closes or expires, and its events do not
 * say which, so the end of a holder's session reads as {@code released}.
 */
final class ZkWatch {

    private final ZooKeeper zk;
    private final String name;
    private final Primitive given;
    private final PrintWriter out;
    private final PrintWriter err;
    private final BlockingQueue<Boolean> wakeUps = new LinkedBlockingQueue<>();
    /** Set when the watch must be set again: at the start, and after a reconnection (maybe on a new session). */
    private final AtomicBoolean unwatched = new AtomicBoolean(true);

    ZkWatch(ZooKeeper zk, String name, Primitive given, PrintWriter out, PrintWriter err) {
        this.zk = zk;
        this.name = name;
        this.given = given;
        this.out = out;
        this.err = err;
    }

    /** Watches until the thread is interrupted. */
    int run() {
        Watcher wake = event -> wakeUps.add(true);
        ConnectionStateListener reconnect = (client, state) -> {
            if (state == ConnectionState.RECONNECTED) {
                unwatched.set(true);
                wakeUps.add(true);
            }
        };
        zk.client().getConnectionStateListenable().addListener(reconnect);
        try {
            watch(wake);
            Primitive kind = given != null ? given : zk.detect(name).orElse(null);
            Map<String, Claimant> last = new LinkedHashMap<>();
            if (kind != null) {
                for (Claimant c : zk.claimants(kind, name)) {
                    line(c.role() == Claimant.Role.HOLDER ? "holding" : "waiting", kind, c);
                    last.put(c.key(), c);
                }
                out.printf(
                        "%s watching %s %s (%d holding or waiting); Ctrl-C to stop%n",
                        WatchCommand.time(), KeyLayout.label(kind), name, last.size());
            } else {
                out.printf(
                        "%s watching %s: nobody holds or waits for it now; waiting for a claim (its kind is found from its"
                                + " first nodes; --primitive names it); Ctrl-C to stop%n",
                        WatchCommand.time(), name);
            }
            out.flush();
            Instant unreachableSince = null;
            while (!Thread.currentThread().isInterrupted()) {
                if (wakeUps.poll(LeaseClock.INTERVAL_MILLIS, TimeUnit.MILLISECONDS) != null) {
                    wakeUps.clear();
                }
                try {
                    watch(wake);
                    if (kind == null) {
                        kind = zk.detect(name).orElse(null);
                        if (kind != null) {
                            out.printf("%s %s is claimed as a %s%n", WatchCommand.time(), name, KeyLayout.label(kind));
                        }
                    }
                    if (kind != null) {
                        last = compare(kind, last, zk.claimants(kind, name));
                    }
                    if (unreachableSince != null) {
                        err.printf(
                                "disco: %s ZooKeeper answers again (unreachable for %d s); listing anew%n",
                                WatchCommand.time(),
                                Duration.between(unreachableSince, Instant.now())
                                        .toSeconds());
                        unreachableSince = null;
                    }
                } catch (CliFailure f) {
                    if (Thread.currentThread().isInterrupted()) {
                        break; // Ctrl-C (or the caller's interrupt) during a read: the end of the watch
                    }
                    if (f.exitCode() != ExitCode.UNREACHABLE) {
                        throw f;
                    }
                    unwatched.set(true);
                    if (unreachableSince == null) {
                        unreachableSince = Instant.now();
                        err.printf(
                                "disco: %s %s; still watching: trying again until it answers%n",
                                WatchCommand.time(), f.getMessage());
                    }
                }
                out.flush();
                err.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            zk.client().getConnectionStateListenable().removeListener(reconnect);
        }
        return ExitCode.OK;
    }

    /** Sets the persistent recursive watch on the name when it is not set (at the start, after a reconnection). */
    private void watch(Watcher wake) {
        if (unwatched.getAndSet(false)) {
            try {
                zk.await(
                        () -> zk.client()
                                .watchers()
                                .add()
                                .withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                                .usingWatcher(wake)
                                .forPath(name),
                        "watch of " + name);
            } catch (CliFailure f) {
                unwatched.set(true);
                throw f;
            }
        }
    }

    /** Prints what changed from {@code before} to {@code after}; returns {@code after} by key. */
    private Map<String, Claimant> compare(Primitive kind, Map<String, Claimant> before, List<Claimant> after) {
        Map<String, Claimant> next = new LinkedHashMap<>();
        for (Claimant c : after) {
            next.put(c.key(), c);
        }
        List<Claimant> gone = new ArrayList<>();
        for (Claimant c : before.values()) {
            if (!next.containsKey(c.key())) {
                gone.add(c);
            }
        }
        for (Claimant c : gone) {
            line(ending(c), kind, c);
        }
        for (Claimant c : after) {
            Claimant was = before.get(c.key());
            if (c.role() == Claimant.Role.HOLDER && (was == null || was.role() == Claimant.Role.WAITER)) {
                line("acquired", kind, c);
            } else if (was == null) {
                line("queued", kind, c);
            } else if (c.role() == Claimant.Role.HOLDER && !Objects.equals(c.token(), was.token())) {
                line("token", kind, c);
            }
        }
        return next;
    }

    /** How {@code gone} went: broken (a record of disco break exists), else released or withdrew. */
    private String ending(Claimant gone) {
        boolean broken = zk.await(
                () -> zk.client().checkExists().forPath(ZooKeeperNodes.breakRecord(gone.key())) != null,
                "read of the break record");
        if (broken) {
            return "broken";
        }
        return gone.role() == Claimant.Role.HOLDER ? "released" : "withdrew";
    }

    private void line(String event, Primitive kind, Claimant c) {
        WatchCommand.line(out, event, kind, c, true, name);
    }
}

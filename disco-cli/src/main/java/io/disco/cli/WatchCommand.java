package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.etcd.EtcdKeys;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code disco watch NAME}: one line per change of who holds or waits, until interrupted. etcd watches on the
 * name's keys (and its phase marker and slot keys) only wake it up: after each batch of events, and every
 * {@link LeaseClock#INTERVAL_MILLIS}, the claimants are listed again and compared with the last listing, so every
 * line says what the listing says (the same order and tokens as {@code disco holders}).
 *
 * <p>For on-call use it outlives what would end a listing:
 * <ul>
 *   <li>a name nobody holds now is watched until somebody claims it (its kind found from its first keys);</li>
 *   <li>etcd unreachable: it says so once, keeps trying, and says when etcd answers again; its watches resume
 *       from the last revision seen, and a gap etcd has compacted away is named (what happened in it is not
 *       shown; the listing after it is);</li>
 *   <li>a claimant that is gone is told apart, as far as etcd's state allows: {@code released} (its key was
 *       deleted, its lease lives: a release; a waiter: {@code withdrew}), {@code broken} (deleted by
 *       {@code disco break}, which leaves a {@link BreakRecord}), {@code closed} (its lease was revoked before it
 *       could run out: its client closed) and {@code expired} (its lease ran out), by {@link LeaseClock}.</li>
 * </ul>
 */
@Command(
        name = "watch",
        mixinStandardHelpOptions = true,
        footer = {
            "%n" + "On ZooKeeper (--backend zookeeper) a persistent recursive watch on NAME wakes the listing; a node "
                    + "that is gone is broken (disco break's record of it exists), else released (a holder) or withdrew (a "
                    + "waiter): ZooKeeper deletes a session's nodes when it closes or expires, and its events do not say "
                    + "which, so a holder's end of session reads as released.",
            "%n"
                    + "On Redis (--backend redis) the name's channel and disco:gone wake the listing: a claim that is gone is "
                    + "broken (its break was announced on disco:gone), expired (its key's TTL had run out: its owner "
                    + "stopped renewing), else released (a holder) or withdrew (a waiter).",
            "%n" + "Events: holding/waiting (at start), acquired, queued, token (a holder's token became known or "
                    + "changed), released (its key was deleted and its lease lives: a release, or an etcdctl del), broken (deleted "
                    + "by disco break), closed (its lease was revoked before it could run out: the holder closed its client), "
                    + "expired (its lease ran out: the holder stopped renewing it), ended (its lease is gone and was never read: "
                    + "closed or expired), withdrew (a waiter gave up). Each line: time "
                    + "(UTC, this host's clock), event, role, key, token, lease. It waits for a name nobody uses yet, and "
                    + "outlives an unreachable etcd (said once on stderr, and when it answers again).",
            "%n" + ExitCode.FOOTER
        },
        description = "Print the hand-overs of NAME as they happen, one line per change, until interrupted (Ctrl-C).")
final class WatchCommand implements Callable<Integer> {

    /** How many listings a claimant found gone waits for the delete event that says at which revision it went. */
    private static final int DEFERRALS = 4;

    @Mixin
    Connection connection;

    @Parameters(paramLabel = "NAME", description = "the lock, read/write lock, semaphore or election name")
    String name;

    @Option(
            names = "--primitive",
            paramLabel = "KIND",
            description = "lock, rwlock, semaphore or election (default: found from the keys present, or from the first"
                    + " keys of a name nobody uses yet)")
    Primitive primitive;

    @Spec
    CommandSpec spec;

    /** A wake-up of the loop: an event batch ({@code error} null) or a failed watch. */
    private record Wake(Throwable error) {}

    /** A delete event of a claimant's key: its revision and when it arrived (nanoTime). */
    private record Delete(long revision, long atNanos) {}

    private final BlockingQueue<Wake> wakeUps = new LinkedBlockingQueue<>();
    private final Map<String, Delete> deletes = new ConcurrentHashMap<>();
    private final AtomicLong lastRevision = new AtomicLong();
    private final List<Watch.Watcher> watchers = new ArrayList<>();
    private final LeaseClock leases = new LeaseClock();
    private final Map<String, Integer> deferred = new HashMap<>();
    private boolean compactedGap;
    private PrintWriter out;
    private PrintWriter err;

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        err = spec.commandLine().getErr();
        if (connection.kind() == Connection.Kind.ZOOKEEPER) {
            NameArgument.check(name, err, Connection.Kind.ZOOKEEPER);
            try (ZooKeeper zk = connection.openZooKeeper()) {
                return new ZkWatch(zk, name, primitive, out, err).run();
            }
        }
        if (connection.kind() == Connection.Kind.REDIS) {
            NameArgument.check(name, err, Connection.Kind.REDIS);
            try (Redis redis = connection.openRedis()) {
                return new RedisWatch(redis, name, primitive, out, err).run();
            }
        }
        NameArgument.check(name, err);
        try (Etcd etcd = connection.openEtcd()) {
            Primitive kind =
                    primitive != null ? primitive : KeyLayout.detect(etcd, name).orElse(null);
            lastRevision.set(revision(etcd));
            watch(etcd, lastRevision.get() + 1);
            Map<String, Claimant> last = new LinkedHashMap<>();
            if (kind != null) {
                for (Claimant c : etcd.claimants(kind, name)) {
                    line(c.role() == Claimant.Role.HOLDER ? "holding" : "waiting", kind, c);
                    last.put(c.key(), c);
                }
                leases.read(etcd, last.values().stream().map(Claimant::leaseId).toList());
                out.printf(
                        "%s watching %s %s (%d holding or waiting); Ctrl-C to stop%n",
                        time(), KeyLayout.label(kind), name, last.size());
            } else {
                out.printf(
                        "%s watching %s: nobody holds or waits for it now; waiting for a claim (its kind is found from its"
                                + " first keys; --primitive names it); Ctrl-C to stop%n",
                        time(), name);
            }
            out.flush();
            Instant unreachableSince = null;
            while (!Thread.currentThread().isInterrupted()) {
                Wake wake = wakeUps.poll(LeaseClock.INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
                List<Wake> wakes = new ArrayList<>();
                if (wake != null) {
                    wakes.add(wake);
                    wakeUps.drainTo(wakes);
                }
                Optional<Throwable> failed =
                        wakes.stream().map(Wake::error).filter(Objects::nonNull).findFirst();
                try {
                    if (failed.isPresent()) {
                        rewatch(etcd, failed.get());
                    }
                    if (kind == null) {
                        kind = KeyLayout.detect(etcd, name).orElse(null);
                        if (kind != null) {
                            out.printf("%s %s is claimed as a %s%n", time(), name, KeyLayout.label(kind));
                        }
                    }
                    if (kind != null) {
                        last = compare(etcd, kind, last, etcd.claimants(kind, name));
                        leases.read(
                                etcd,
                                last.values().stream().map(Claimant::leaseId).toList());
                    }
                    if (unreachableSince != null) {
                        err.printf(
                                "disco: %s etcd answers again (unreachable for %d s); listing anew%n",
                                time(),
                                Duration.between(unreachableSince, Instant.now())
                                        .toSeconds());
                        unreachableSince = null;
                    }
                } catch (CliFailure f) {
                    if (Thread.currentThread().isInterrupted()) {
                        break; // Ctrl-C (or the caller's interrupt) during a read: the end of the watch, not a failure
                    }
                    if (f.exitCode() != ExitCode.UNREACHABLE) {
                        throw f;
                    }
                    if (unreachableSince == null) {
                        unreachableSince = Instant.now();
                        err.printf(
                                "disco: %s %s; still watching: trying again until it answers%n",
                                time(), f.getMessage());
                    }
                }
                out.flush();
                err.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            watchers.forEach(Watch.Watcher::close);
        }
        return ExitCode.OK;
    }

    /** etcd's current revision (a read of the name's own key range, counted only). */
    private long revision(Etcd etcd) {
        return etcd.await(
                        () -> etcd.client()
                                .getKVClient()
                                .get(
                                        Etcd.bytes(name + "/"),
                                        GetOption.builder()
                                                .isPrefix(true)
                                                .withCountOnly(true)
                                                .build()),
                        "read of the revision")
                .getHeader()
                .getRevision();
    }

    /**
     * Watches, from revision {@code from} on, every key whose change may change the listing: the name's keys (any
     * kind's), a read/write lock's phase marker and a semaphore's slot keys. Each batch of events, or an error,
     * wakes the loop; a delete of one of the name's keys is remembered with its revision.
     */
    private void watch(Etcd etcd, long from) {
        ByteSequence own = Etcd.bytes(name + "/");
        Watch.Listener listener = Watch.listener(
                response -> {
                    for (WatchEvent e : response.getEvents()) {
                        KeyValue kv = e.getKeyValue();
                        lastRevision.accumulateAndGet(kv.getModRevision(), Math::max);
                        if (e.getEventType() == WatchEvent.EventType.DELETE
                                && kv.getKey().startsWith(own)) {
                            deletes.put(Etcd.text(kv.getKey()), new Delete(kv.getModRevision(), System.nanoTime()));
                        }
                    }
                    wakeUps.add(new Wake(null));
                },
                e -> wakeUps.add(new Wake(e)));
        WatchOption prefix =
                WatchOption.builder().isPrefix(true).withRevision(from).build();
        watchers.add(etcd.client().getWatchClient().watch(own, prefix, listener));
        watchers.add(etcd.client().getWatchClient().watch(Etcd.bytes(EtcdKeys.slots(name)), prefix, listener));
        watchers.add(etcd.client()
                .getWatchClient()
                .watch(
                        Etcd.bytes(EtcdKeys.phaseMarker(name)),
                        WatchOption.builder().withRevision(from).build(),
                        listener));
    }

    /** A watch failed: watches again, from the last revision seen, or from now when etcd compacted it away. */
    private void rewatch(Etcd etcd, Throwable error) {
        watchers.forEach(Watch.Watcher::close);
        watchers.clear();
        long from = lastRevision.get() + 1;
        if (error instanceof CompactedException compacted) {
            long now = revision(etcd);
            err.printf(
                    "disco: %s missed what happened between revisions %d and %d: etcd compacted them away (revision %d);"
                            + " listing anew, the hand-overs in the gap are not shown%n",
                    time(), from, now, compacted.getCompactedRevision());
            lastRevision.set(now);
            from = now + 1;
            compactedGap = true; // the deletes in the gap will never be told: nothing gone waits for them
        } else {
            err.printf(
                    "disco: %s the watch failed (%s); watching again from revision %d%n",
                    time(), error.getMessage(), from);
        }
        watch(etcd, from);
    }

    /** Prints what changed from {@code before} to {@code after}; returns {@code after} by key, with claimants still deferred. */
    private Map<String, Claimant> compare(
            Etcd etcd, Primitive kind, Map<String, Claimant> before, List<Claimant> after) {
        Map<String, Claimant> next = new LinkedHashMap<>();
        for (Claimant c : after) {
            next.put(c.key(), c);
        }
        for (Claimant gone : before.values()) {
            Claimant same = next.get(gone.key());
            if (same != null && same.leaseId() == gone.leaseId()) {
                continue;
            }
            Delete delete = deletes.remove(gone.key());
            int waits = deferred.merge(gone.key(), 1, Integer::sum);
            if (delete == null && same == null && waits <= DEFERRALS && !compactedGap) {
                next.put(
                        gone.key(),
                        gone); // its delete event is on its way: it says the revision a break record would have
                continue;
            }
            deferred.remove(gone.key());
            line(ending(etcd, gone, delete), kind, gone);
        }
        for (Claimant c : after) {
            Claimant was = before.get(c.key());
            boolean isNew = was == null || was.leaseId() != c.leaseId();
            if (c.role() == Claimant.Role.HOLDER && (isNew || was.role() == Claimant.Role.WAITER)) {
                line("acquired", kind, c);
            } else if (isNew) {
                line("queued", kind, c);
            } else if (c.role() == Claimant.Role.HOLDER && !Objects.equals(c.token(), was.token())) {
                line("token", kind, c);
            }
        }
        compactedGap = false;
        leases.retain(next.values().stream().map(Claimant::leaseId).toList());
        deletes.keySet().removeIf(k -> !next.containsKey(k) && !before.containsKey(k)); // keys never listed
        return next;
    }

    /** How {@code gone} went: broken, released/withdrew, closed or expired. */
    private String ending(Etcd etcd, Claimant gone, Delete delete) {
        if (delete != null) {
            List<KeyValue> record = etcd.await(
                            () -> etcd.client().getKVClient().get(Etcd.bytes(BreakRecord.key(gone.key()))),
                            "read of the break record")
                    .getKvs();
            if (!record.isEmpty() && record.get(0).getModRevision() == delete.revision()) {
                return "broken";
            }
        }
        if (gone.leaseId() == 0 || leases.alive(etcd, gone.leaseId())) {
            return gone.role() == Claimant.Role.HOLDER ? "released" : "withdrew";
        }
        switch (leases.ending(gone.leaseId(), delete == null ? System.nanoTime() : delete.atNanos())) {
            case CLOSED:
                return "closed";
            case EXPIRED:
                return "expired";
            default:
                return "ended"; // its lease is gone, never read alive: closed or expired
        }
    }

    private void line(String event, Primitive kind, Claimant c) {
        line(out, event, kind, c, EtcdKeys.isClaimOf(kind, name, c.key()), EtcdKeys.nameOf(kind, name, c.key()));
    }

    /**
     * One line of the watch, the same on every backend: time, event, role, key, token and lease, and for a key of a
     * nested name ({@code own} false) that name.
     */
    static void line(PrintWriter out, String event, Primitive kind, Claimant c, boolean own, String nameOfKey) {
        out.printf(
                "%s %-8s %-13s %s token=%s lease=%s%s%n",
                time(),
                event,
                ClaimantTable.role(kind, own, c),
                c.key(),
                own ? ClaimantTable.token(kind, c) : "-",
                ClaimantTable.lease(c.leaseId()),
                own ? "" : " name=" + nameOfKey);
    }

    /** Now, as the lines show it: UTC, this host's clock, milliseconds. */
    static String time() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }
}

package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code disco watch NAME}: one line per change of who holds or waits, until interrupted. etcd watches
 * on the name's keys (and, for a read/write lock or a semaphore, on its phase marker or slot keys)
 * only wake it up: after each batch of events the claimants are listed again and compared with the
 * last listing, so every line says what the listing says (the same order and tokens as
 * {@code disco holders}).
 */
@Command(name = "watch", mixinStandardHelpOptions = true, footer = {"%n" + "Events: holding/waiting (at start), acquired, queued, token (a holder's token became known or "
            + "changed), released (its key was deleted: a release or a break), expired (its lease ran out), "
            + "withdrew (a waiter gave up). Each line: time (UTC, this host's clock), event, role, key, token, "
            + "lease.", "%n" + ExitCode.FOOTER},
        description = "Print the hand-overs of NAME as they happen, one line per change, until interrupted (Ctrl-C).")
final class WatchCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(paramLabel = "NAME", description = "the lock, read/write lock, semaphore or election name")
    String name;

    @Option(names = "--primitive", paramLabel = "KIND",
            description = "lock, rwlock, semaphore or election (default: found from the keys present; needed for a name nobody uses yet)")
    Primitive primitive;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        NameArgument.check(name, spec.commandLine().getErr());
        try (Etcd etcd = connection.open()) {
            Primitive kind = KeyLayout.resolve(etcd, name, primitive);
            BlockingQueue<String> wakeUps = new LinkedBlockingQueue<>();
            List<Watch.Watcher> watchers = new ArrayList<>();
            try {
                watch(etcd, kind, wakeUps, watchers);
                Map<String, Claimant> last = new LinkedHashMap<>();
                List<Claimant> now = etcd.claimants(kind, name);
                for (Claimant c : now) {
                    line(out, c.role() == Claimant.Role.HOLDER ? "holding" : "waiting", kind, c);
                    last.put(c.key(), c);
                }
                out.printf("%s watching %s %s (%d holding or waiting); Ctrl-C to stop%n", time(), KeyLayout.label(kind), name, now.size());
                out.flush();
                while (!Thread.currentThread().isInterrupted()) {
                    String wake = wakeUps.take();
                    wakeUps.clear();
                    if (!wake.isEmpty()) {
                        err.println("disco: " + wake + "; watching again");
                        err.flush();
                        watchers.forEach(Watch.Watcher::close);
                        watchers.clear();
                        watch(etcd, kind, wakeUps, watchers);
                    }
                    last = compare(out, etcd, kind, last, etcd.claimants(kind, name));
                    out.flush();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                watchers.forEach(Watch.Watcher::close);
            }
            return ExitCode.OK;
        }
    }

    /** Watches every key whose change may change the listing; each batch of events (or an error) wakes the loop. */
    private void watch(Etcd etcd, Primitive kind, BlockingQueue<String> wakeUps, List<Watch.Watcher> watchers) {
        List<ByteSequence> prefixes = new ArrayList<>(List.of(Etcd.bytes(name + "/")));
        if (kind == Primitive.SEMAPHORE) {
            prefixes.add(Etcd.bytes(KeyLayout.SLOT + name + "/"));
        }
        for (ByteSequence p : prefixes) {
            watchers.add(etcd.client().getWatchClient().watch(p, WatchOption.builder().isPrefix(true).build(),
                    r -> wakeUps.add(""), e -> wakeUps.add("the watch failed (" + e.getMessage() + ")")));
        }
        if (kind == Primitive.RWLOCK) {
            watchers.add(etcd.client().getWatchClient().watch(Etcd.bytes(KeyLayout.PHASE + name), WatchOption.DEFAULT,
                    r -> wakeUps.add(""), e -> wakeUps.add("the watch failed (" + e.getMessage() + ")")));
        }
    }

    /** Prints what changed from {@code before} to {@code after}; returns {@code after} by key. */
    private Map<String, Claimant> compare(PrintWriter out, Etcd etcd, Primitive kind, Map<String, Claimant> before, List<Claimant> after) {
        Map<String, Claimant> next = new LinkedHashMap<>();
        for (Claimant c : after) {
            next.put(c.key(), c);
        }
        for (Claimant gone : before.values()) {
            Claimant same = next.get(gone.key());
            if (same == null || same.leaseId() != gone.leaseId()) {
                boolean expired = gone.leaseId() != 0 && etcd.ttl(gone.leaseId()) < 0;
                line(out, expired ? "expired" : gone.role() == Claimant.Role.HOLDER ? "released" : "withdrew", kind, gone);
            }
        }
        for (Claimant c : after) {
            Claimant was = before.get(c.key());
            boolean isNew = was == null || was.leaseId() != c.leaseId();
            if (c.role() == Claimant.Role.HOLDER && (isNew || was.role() == Claimant.Role.WAITER)) {
                line(out, "acquired", kind, c);
            } else if (isNew) {
                line(out, "queued", kind, c);
            } else if (c.role() == Claimant.Role.HOLDER && !Objects.equals(c.token(), was.token())) {
                line(out, "token", kind, c);
            }
        }
        return next;
    }

    private void line(PrintWriter out, String event, Primitive kind, Claimant c) {
        boolean own = KeyLayout.own(kind, name, c.key());
        out.printf("%s %-8s %-13s %s token=%s lease=%s%s%n", time(), event, ClaimantTable.role(kind, name, c), c.key(),
                own ? ClaimantTable.token(c) : "-", ClaimantTable.lease(c.leaseId()),
                own ? "" : " name=" + KeyLayout.owner(kind, name, c.key()));
    }

    private static String time() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }
}

package io.disco.provider.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.cluster.Member;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.grpc.Context;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd server versions with a known lease bug, and the check that warns of them once per jetcd client.
 *
 * <p>The bug (etcd issues 15247 and 12528): a leader that stalls (frozen, a slow disk, a starved CPU)
 * still believes, when it resumes, that it leads, and revokes the leases whose TTL ran out on its own
 * clock, through the new leader, which has been renewing them all along. Every key on such a lease is
 * deleted, and every owner that renewed in time loses what it held. Fixed in etcd 3.4.31 and 3.5.13
 * (the old leader's revoke requests are ignored); every 3.6 release has the fix. Affected: 3.4.x below
 * 3.4.31, 3.5.x below 3.5.13, and anything older than 3.4 (which also has never been tested here).
 *
 * <p>The check reads every member's version ({@code MemberList}, then the Maintenance {@code Status} of
 * each member, jetcd's {@code statusMember}) in the background, bounded by the request timeout, so a slow
 * or unreachable etcd never delays or fails a session's start; an answer it cannot get is logged at
 * DEBUG and no more is done.
 */
final class EtcdServerVersion {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdServerVersion.class);

    /** The first 3.4 release with the fix. */
    static final String FIXED_3_4 = "3.4.31";
    /** The first 3.5 release with the fix. */
    static final String FIXED_3_5 = "3.5.13";

    private static final Pattern VERSION = Pattern.compile("v?(\\d+)\\.(\\d+)\\.(\\d+)(-[0-9A-Za-z.-]+)?(\\+.*)?");

    /** One check per jetcd client, for as long as the client is in use; guarded by itself. */
    private static final Map<Client, CompletableFuture<List<MemberVersion>>> CHECKS = new WeakHashMap<>();

    private EtcdServerVersion() {}

    /** What a version means for the lease bug. */
    enum Verdict {
        /** The version has the bug. */
        AFFECTED,
        /** The version has the fix. */
        FIXED,
        /** Not a version this check can read. */
        UNKNOWN
    }

    /** A member and the version it reported, or the reason none was read. */
    record MemberVersion(String member, String version, String failure) {

        Verdict verdict() {
            return version == null ? Verdict.UNKNOWN : of(version);
        }

        @Override
        public String toString() {
            return "member " + member
                    + (version != null ? " runs etcd " + version : " (version not read: " + failure + ")");
        }
    }

    /**
     * Whether an etcd server version has the lease bug: 3.4.x below 3.4.31, 3.5.x below 3.5.13 and
     * anything older than 3.4 do; a pre-release of the fixed patch release counts as before it.
     *
     * @param version what etcd reports, for example {@code 3.4.23}
     * @return the verdict; {@link Verdict#UNKNOWN} for anything that is not {@code major.minor.patch}
     */
    static Verdict of(String version) {
        Matcher m = version == null ? null : VERSION.matcher(version.trim());
        if (m == null || !m.matches()) {
            return Verdict.UNKNOWN;
        }
        int major;
        int minor;
        int patch;
        try {
            major = Integer.parseInt(m.group(1));
            minor = Integer.parseInt(m.group(2));
            patch = Integer.parseInt(m.group(3));
        } catch (NumberFormatException tooLong) {
            return Verdict.UNKNOWN;
        }
        boolean preRelease = m.group(4) != null;
        if (major != 3) {
            return major < 3 ? Verdict.AFFECTED : Verdict.FIXED;
        }
        if (minor < 4) {
            return Verdict.AFFECTED;
        }
        if (minor == 4) {
            return below(patch, preRelease, 31) ? Verdict.AFFECTED : Verdict.FIXED;
        }
        if (minor == 5) {
            return below(patch, preRelease, 13) ? Verdict.AFFECTED : Verdict.FIXED;
        }
        return Verdict.FIXED;
    }

    private static boolean below(int patch, boolean preRelease, int fixed) {
        return patch < fixed || patch == fixed && preRelease;
    }

    /**
     * Starts the check of {@code client}'s cluster, unless it was started for this client before: at
     * most one warning per client. Returns at once; never throws.
     *
     * @param timeout how long the check may wait for etcd's answers, in all
     * @return the members' versions, once read (completes normally, also when nothing could be read)
     */
    static CompletableFuture<List<MemberVersion>> checkOnce(Client client, Duration timeout) {
        CompletableFuture<List<MemberVersion>> check;
        synchronized (CHECKS) {
            check = CHECKS.get(client);
            if (check != null) {
                return check;
            }
            check = new CompletableFuture<>();
            CHECKS.put(client, check);
        }
        CompletableFuture<List<MemberVersion>> result = check;
        // On a daemon thread of its own, once per client: never on the opening thread, never on jetcd's I/O event loop.
        Thread t = new Thread(
                () -> {
                    List<MemberVersion> versions = List.of();
                    try {
                        versions = read(client, timeout);
                        warnIfAffected(versions);
                    } catch (InterruptedException e) {
                        LOG.debug(
                                "interrupted while reading the etcd members' versions; not checked for known lease bugs");
                    } catch (Exception e) {
                        LOG.debug(
                                "could not read the etcd members' versions; not checked for known lease bugs: {}",
                                String.valueOf(e));
                    } finally {
                        result.complete(versions);
                    }
                },
                "disco-etcd-version-check");
        t.setDaemon(true);
        try {
            t.start();
        } catch (RuntimeException | OutOfMemoryError e) {
            LOG.debug("could not start the check of the etcd members' versions: {}", String.valueOf(e));
            result.complete(List.of());
        }
        return result;
    }

    /** Every member's version, all read within {@code timeout}. */
    private static List<MemberVersion> read(Client client, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Member> members = client.getClusterClient()
                .listMember()
                .get(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .getMembers();
        List<Asked> asked = new ArrayList<>();
        for (Member member : members) {
            asked.add(ask(client, member));
        }
        List<MemberVersion> versions = new ArrayList<>();
        for (Asked a : asked) {
            versions.add(a.answer(deadline));
        }
        return versions;
    }

    /** A member's status, asked; its call runs in {@code scope}, cancelled once answered or given up. */
    private record Asked(
            String where, CompletableFuture<StatusResponse> status, Context.CancellableContext scope, String failure) {

        MemberVersion answer(long deadline) throws InterruptedException {
            if (status == null) {
                return new MemberVersion(where, null, failure);
            }
            try {
                return new MemberVersion(
                        where,
                        status.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                                .getVersion(),
                        null);
            } catch (java.util.concurrent.TimeoutException e) {
                return new MemberVersion(where, null, "no answer in time");
            } catch (java.util.concurrent.ExecutionException e) {
                return new MemberVersion(where, null, String.valueOf(EtcdErrors.unwrap(e)));
            } finally {
                scope.cancel(null);
            }
        }
    }

    /**
     * Asks one member for its status on its first client URL. jetcd opens a channel of its own for it
     * (closed after the answer); the call runs in a gRPC context that is cancelled after the answer or
     * the deadline, so a member that does not answer leaves no call open.
     */
    private static Asked ask(Client client, Member member) {
        String name = member.getName().isEmpty() ? Long.toHexString(member.getId()) : member.getName();
        Optional<URI> url = member.getClientURIs().stream().findFirst();
        if (url.isEmpty()) {
            return new Asked(name, null, null, "no client URL (not started yet)");
        }
        String where = name + " at " + url.get();
        Context.CancellableContext scope = Context.current().withCancellation();
        Context previous = scope.attach();
        try {
            return new Asked(
                    where, client.getMaintenanceClient().statusMember(url.get().toString()), scope, null);
        } catch (RuntimeException e) {
            scope.cancel(e);
            return new Asked(where, null, null, String.valueOf(e));
        } finally {
            scope.detach(previous);
        }
    }

    /** Logs one warning naming every member whose version has the bug; nothing when none has it. */
    static void warnIfAffected(List<MemberVersion> versions) {
        List<MemberVersion> affected =
                versions.stream().filter(v -> v.verdict() == Verdict.AFFECTED).collect(Collectors.toList());
        if (affected.isEmpty()) {
            LOG.debug("etcd members' versions: {}", versions);
            return;
        }
        LOG.warn(warning(affected));
    }

    /** The warning for the members whose version has the bug. */
    static String warning(List<MemberVersion> affected) {
        boolean older = affected.stream().anyMatch(v -> {
            Matcher m = VERSION.matcher(v.version().trim());
            return m.matches()
                    && m.group(1).length() < 9
                    && m.group(2).length() < 9
                    && (Integer.parseInt(m.group(1)) < 3
                            || Integer.parseInt(m.group(1)) == 3 && Integer.parseInt(m.group(2)) < 4);
        });
        return "etcd " + affected.stream().map(MemberVersion::toString).collect(Collectors.joining(", "))
                + (affected.size() == 1 ? ", a version" : ", versions")
                + " with a known lease bug (etcd issues 15247 and 12528):"
                + " a leader that stalls (frozen, a slow disk, a starved CPU) and resumes may revoke leases that the new leader"
                + " has been renewing, so sessions, locks, elections and semaphores are lost although their owners renewed in"
                + " time. Fixed in etcd " + FIXED_3_4 + " and "
                + FIXED_3_5 + ": run etcd " + FIXED_3_5 + " or later (or " + FIXED_3_4 + " or later if you stay on 3.4)"
                + (older ? "; versions older than 3.4 are not tested with disco" : "")
                + ". disco reports such a loss as a loss; it cannot prevent it.";
    }
}

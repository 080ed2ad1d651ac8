package io.disco.provider.etcd;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs that held keys of a session were deleted, not by the session itself: by somebody else (an
 * operator's delete, the lease revoked from outside, which deletes every key of the session at once), at
 * WARN at most once a second, the others at DEBUG and counted in the next WARN; or with the lease, whose
 * loss is then what is logged. Its duties: ask the lease which it was ({@link #report}), and keep the
 * warnings to one a second. Warnings on the session thread only.
 */
final class HeldKeyDeletions {

    private static final Logger LOG = LoggerFactory.getLogger(HeldKeyDeletions.class);

    private final LeaseKeeper lease;
    private final SessionExecutors executors;

    /** The last WARN, and the deletions logged at DEBUG since. */
    private long warnedAt = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

    private int notWarned;

    HeldKeyDeletions(LeaseKeeper lease, SessionExecutors executors) {
        this.lease = lease;
        this.executors = executors;
    }

    /**
     * Logs that a held key was deleted, not by this session: by somebody else (see {@link #warn}),
     * or with the lease, which etcd deletes with all its keys when it expires or is revoked. The lease is
     * asked first (one renewal, sent now): while it lives, the key was deleted by somebody else, at WARN;
     * once it is lost, its loss is what is logged (at WARN, as expired or revoked), and the key at DEBUG.
     * Any thread.
     */
    void report(String message) {
        lease.confirm()
                .thenAccept(alive -> executors.runOnSession(() -> {
                    if (alive) {
                        warn(message
                                + ", not by this owner: somebody deleted it (etcdctl del, disco break?) while its"
                                + " lease lives");
                    } else {
                        LOG.debug(
                                "{}, with its lease ({})",
                                message,
                                lease.finishedCause() == null
                                        ? "closed"
                                        : lease.finishedCause().getMessage());
                    }
                }));
    }

    /** Logs a deletion by somebody else: at WARN at most once a second, else at DEBUG; session thread. */
    private void warn(String message) {
        long now = System.nanoTime();
        if (now - warnedAt >= TimeUnit.SECONDS.toNanos(1)) {
            warnedAt = now;
            LOG.warn(
                    "{}{}",
                    message,
                    notWarned == 0
                            ? ""
                            : " (" + notWarned
                                    + " more held keys of this session deleted since the last such warning, logged at DEBUG)");
            notWarned = 0;
        } else {
            notWarned++;
            LOG.debug("{}", message);
        }
    }
}

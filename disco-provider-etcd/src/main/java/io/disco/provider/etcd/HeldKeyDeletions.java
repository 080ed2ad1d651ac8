package io.disco.provider.etcd;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs that held keys of a session were deleted by somebody else (an operator's delete, the lease
 * revoked from outside, which deletes every key of the session at once): at WARN at most once a
 * second, the others at DEBUG and counted in the next WARN. Session thread only.
 */
final class HeldKeyDeletions {

    private static final Logger LOG = LoggerFactory.getLogger(HeldKeyDeletions.class);

    /** The last WARN, and the deletions logged at DEBUG since. */
    private long warnedAt = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

    private int notWarned;

    void warn(String message) {
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

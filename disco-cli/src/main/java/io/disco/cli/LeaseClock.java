package io.disco.cli;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * How the leases of the claimants {@code disco watch} follows stood when last read, so that a lease found gone
 * can be told to have run out ({@link Ending#EXPIRED}) or to have been revoked before it could
 * ({@link Ending#CLOSED}: its holder closed its client, or somebody revoked it). etcd's events do not say which:
 * both delete the lease's keys.
 *
 * <p>The rule: etcd gives a lease's remaining time in whole seconds, rounded down, so a lease read with
 * {@code r} seconds left at time {@code t} cannot run out before {@code t + r}. Gone before that, it was
 * revoked; gone later, it is taken to have run out (a revoke in its last second reads as an expiry). Read every
 * {@link #INTERVAL_MILLIS}, a lease its holder renews (at a third of its TTL) shows at least a second left when
 * its TTL is 2 s or more, so a close is told apart from an expiry for such leases.
 */
final class LeaseClock {

    /** How often the leases are read. */
    static final long INTERVAL_MILLIS = 500;

    /** How a lease that is gone ended, as far as its readings tell. */
    enum Ending {
        /** Gone before it could have run out: revoked (the holder closed its client, or a revoke by hand). */
        CLOSED,
        /** Gone when it may have run out: its holder stopped renewing it (crashed, paused, cut off). */
        EXPIRED,
        /** Never read while alive: closed or expired. */
        UNKNOWN
    }

    /** One reading: when (nanoTime) and the whole seconds left. */
    private record Reading(long atNanos, long secondsLeft) {}

    private final Map<Long, Reading> readings = new HashMap<>();

    /** Reads each lease not read in the last interval (lease 0, a key without a lease, is skipped). */
    void read(Etcd etcd, Collection<Long> leases) {
        long now = System.nanoTime();
        for (long lease : leases) {
            Reading last = readings.get(lease);
            if (lease == 0 || last != null && now - last.atNanos < INTERVAL_MILLIS * 1_000_000) {
                continue;
            }
            long asked = System.nanoTime();
            long left = etcd.ttl(lease);
            if (left >= 0) {
                readings.put(
                        lease,
                        new Reading(asked, left)); // a gone lease keeps its last reading alive: it tells how it ended
            }
        }
    }

    /** Whether {@code lease} is alive now (read now, whatever the interval). */
    boolean alive(Etcd etcd, long lease) {
        long asked = System.nanoTime();
        long left = etcd.ttl(lease);
        if (left >= 0) {
            readings.put(lease, new Reading(asked, left));
            return true;
        }
        return false;
    }

    /** How {@code lease}, found gone at {@code goneAtNanos}, ended. */
    Ending ending(long lease, long goneAtNanos) {
        Reading last = readings.get(lease);
        if (last == null) {
            return Ending.UNKNOWN;
        }
        return goneAtNanos - last.atNanos < last.secondsLeft * 1_000_000_000L ? Ending.CLOSED : Ending.EXPIRED;
    }

    /** Forgets the leases not in {@code keep}. */
    void retain(Collection<Long> keep) {
        readings.keySet().retainAll(keep);
    }
}

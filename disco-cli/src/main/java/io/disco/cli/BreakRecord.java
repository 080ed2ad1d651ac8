package io.disco.cli;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The record {@code disco break} leaves of each holder key it deletes: {@code disco-broken:<holder key>}, written
 * in the Txn that deletes the key (so its ModRevision is the delete's revision) and leased for
 * {@link #TTL_SECONDS}. etcd's events cannot tell a break from a release (both delete the key and leave the
 * lease); {@code disco watch} reads this record to tell them apart. The value says who broke it and when:
 * {@code broken by <user>@<host> at <time>}. A break made with {@code etcdctl del} leaves none, and reads as a
 * release.
 */
final class BreakRecord {

    /** How long a record lives: long enough for a watch that was cut off for a while to read it. */
    static final long TTL_SECONDS = 300;

    private BreakRecord() {}

    static String key(String holderKey) {
        return io.disco.provider.etcd.EtcdKeys.breakRecord(holderKey);
    }

    static String value() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "unknown-host";
        }
        return "broken by " + System.getProperty("user.name", "unknown") + "@" + host + " at "
                + Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }
}

package io.disco.provider.etcd;

import io.disco.core.internal.grant.Held;
import io.etcd.jetcd.ByteSequence;

/**
 * A grant a service holds: the grant handed to the user, its key and that key's CreateRevision
 * (which identifies the term: a proclamation replaces the grant, never the term), the watch that
 * tells of the key's deletion by anybody else, and when it was committed (System.nanoTime()). It also
 * says the grant's own token for a message ({@link #tokenText}).
 *
 * @param <G> the grant type
 */
record HeldGrant<G>(G grant, ByteSequence key, long createRevision, OwnKeyWatch.Following watch, long sinceNanos)
        implements Held<G> {

    /** Stops following the key: the grant has ended. */
    void stopWatching() {
        if (watch != null) {
            watch.stop();
        }
    }

    /** The key, as text. */
    String keyText() {
        return key.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The same term with another grant (a proclamation's new value). */
    HeldGrant<G> withGrant(G replacement) {
        return new HeldGrant<>(replacement, key, createRevision, watch, sinceNanos);
    }

    /**
     * The grant's own token for a message, {@code " (token 1234)"}, or nothing for a grant without one: a key's
     * create revision is the token of a lock or a writer only (a reader's is its phase's, a permit's its slot's).
     * Only the grant records' own accessors are called: this is called under a service's monitor.
     */
    String tokenText() {
        io.disco.fencing.FencingToken token;
        if (grant instanceof io.disco.lock.Grant g) {
            token = g.token();
        } else if (grant instanceof io.disco.rwlock.RWGrant g) {
            token = g.token();
        } else if (grant instanceof io.disco.semaphore.Permit p) {
            token = p.token();
        } else if (grant instanceof io.disco.election.Leadership l) {
            token = l.token();
        } else {
            return "";
        }
        return " (token " + token.value() + ")";
    }
}

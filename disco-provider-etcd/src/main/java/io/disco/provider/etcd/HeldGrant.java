package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;

/**
 * A grant a service holds: the grant handed to the user, its key and that key's CreateRevision
 * (which identifies the term: a proclamation replaces the grant, never the term), the watch that
 * tells of the key's deletion by anybody else, and when it was committed (System.nanoTime()).
 *
 * @param <G> the grant type
 */
record HeldGrant<G>(G grant, ByteSequence key, long createRevision, OwnKeyWatch.Following watch, long sinceNanos) {

    /** The same term with another grant (a proclamation's new value). */
    HeldGrant<G> withGrant(G replacement) {
        return new HeldGrant<>(replacement, key, createRevision, watch, sinceNanos);
    }
}

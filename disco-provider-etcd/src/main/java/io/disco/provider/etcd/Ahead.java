package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The keys ahead of a waiting claim (created before its own key, in its wait range), by name, as one read at
 * revision {@link #knownAt} found them: all of them ({@link #complete}), or only the newest {@link #READ}. No key can
 * join them later (a key created later has a higher CreateRevision), so from that revision on the set only shrinks,
 * and the first delete of one of these names after it deletes exactly the incarnation that was ahead (a name
 * created again after that is behind the claim). A wait that sees every delete in the range after {@code knownAt}
 * therefore knows, without reading, the revision at which few enough keys are left ahead. Not thread-safe: the
 * claim's context only.
 */
final class Ahead {

    /**
     * How many names of keys ahead one read asks for, beyond the ones a semaphore lets stay: a longer queue is
     * read again when the names read are gone.
     */
    static final int READ = 128;

    private final Set<ByteSequence> keys;
    /** The keys ahead as read, newest first. */
    private final List<KeyValue> newestFirst;

    private final boolean complete;
    private final long knownAt;

    private Ahead(Set<ByteSequence> keys, List<KeyValue> newestFirst, boolean complete, long knownAt) {
        this.keys = keys;
        this.newestFirst = newestFirst;
        this.complete = complete;
        this.knownAt = knownAt;
    }

    /** How many keys a read of the keys ahead asks for, when {@code allowed} of them may stay. */
    static int readLimit(int allowed) {
        return allowed + READ;
    }

    /**
     * The keys ahead, from a read at revision {@code revision}, newest first, with limit {@link #readLimit}: all of
     * them when fewer than the limit came back.
     *
     * @param read the keys read, which may hold the own key (it is left out)
     */
    static Ahead of(List<KeyValue> read, ByteSequence ownKey, int allowed, long revision) {
        Set<ByteSequence> keys = new HashSet<>();
        List<KeyValue> newestFirst = new ArrayList<>(read.size());
        for (KeyValue kv : read) {
            if (!kv.getKey().equals(ownKey)) {
                keys.add(kv.getKey());
                newestFirst.add(kv);
            }
        }
        return new Ahead(keys, newestFirst, keys.size() < readLimit(allowed), revision);
    }

    /**
     * The {@code n}-th newest key ahead as read (its name and CreateRevision; 1 is the newest), or the oldest read
     * when fewer were read; null when none is ahead.
     */
    KeyValue newest(int n) {
        return newestFirst.isEmpty() ? null : newestFirst.get(Math.min(n, newestFirst.size()) - 1);
    }

    /** The revision of the read: the set holds what was ahead then; deletes at or below it are in it already. */
    long knownAt() {
        return knownAt;
    }

    /** Whether the set holds every key ahead (else the newest only, and it is read again when they are gone). */
    boolean complete() {
        return complete;
    }

    /** How many of the keys read are still ahead. */
    int size() {
        return keys.size();
    }

    /**
     * A delete of {@code key} after {@link #knownAt}: the key is no longer ahead, if it was.
     *
     * @return whether it was one of the keys ahead
     */
    boolean deleted(ByteSequence key) {
        return keys.remove(key);
    }

    @Override
    public String toString() {
        return keys.size() + (complete ? "" : "+") + " ahead at revision " + knownAt;
    }
}

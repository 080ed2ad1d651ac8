package io.disco.cli;

import io.disco.core.ClaimMetadata;
import io.disco.core.Primitive;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import java.util.List;
import java.util.Optional;

/**
 * The keys this library (and etcd's Go recipes) write for a name, and which primitive a name is
 * claimed as, told from the keys present:
 * <ul>
 *   <li>read/write lock: keys under {@code <name>/read/} or {@code <name>/write/}, or the phase marker
 *       {@code disco-rwlock-phase:<name>};</li>
 *   <li>semaphore: the limit record {@code disco-semaphore-limit:<name>} or slot keys
 *       {@code disco-semaphore-slot:<name>/<i>};</li>
 *   <li>otherwise keys {@code <name>/<lease id in hex>}: a lock when every value is this library's
 *       metadata or empty (what {@code etcdctl lock} and Go's Mutex write), else an election (a
 *       candidate's value is its own: {@code etcdctl elect NAME PROPOSAL}). A Go semaphore without a
 *       limit record, or an election whose candidates' values are empty, reads as a lock: name the
 *       primitive with {@code --primitive} then.</li>
 * </ul>
 */
final class KeyLayout {

    /** The non-leased phase marker of a read/write lock: {@code disco-rwlock-phase:<name>}. */
    static final String PHASE = "disco-rwlock-phase:";
    /** The non-leased limit record of a semaphore: {@code disco-semaphore-limit:<name>}. */
    static final String LIMIT = "disco-semaphore-limit:";
    /** A semaphore's leased slot keys: {@code disco-semaphore-slot:<name>/<i>}, value {@code <holder key>@<its CreateRevision>}. */
    static final String SLOT = "disco-semaphore-slot:";

    private KeyLayout() {
    }

    /** @return the primitive of {@code name} from the keys present, or empty when no key of it exists */
    static Optional<Primitive> detect(Etcd etcd, String name) {
        TxnResponse r = etcd.await(() -> etcd.client().getKVClient().txn().Then(
                Op.get(Etcd.bytes(name + "/"), GetOption.builder().isPrefix(true).build()),
                Op.get(Etcd.bytes(PHASE + name), GetOption.builder().withCountOnly(true).build()),
                Op.get(Etcd.bytes(LIMIT + name), GetOption.builder().withCountOnly(true).build()),
                Op.get(Etcd.bytes(SLOT + name + "/"), GetOption.builder().isPrefix(true).withCountOnly(true).build()))
                .commit(), "read of the keys of " + name);
        return kind(name, r.getGetResponses().get(0).getKvs(), r.getGetResponses().get(1).getCount() > 0,
                r.getGetResponses().get(2).getCount() > 0 || r.getGetResponses().get(3).getCount() > 0);
    }

    /**
     * The primitive of {@code name} from what was read of it: the keys under {@code name/}, whether its phase marker
     * exists, and whether a semaphore's limit record or slot keys exist; empty when none of it does.
     */
    static Optional<Primitive> kind(String name, List<KeyValue> queue, boolean phaseMarker, boolean semaphoreMarkers) {
        boolean rw = phaseMarker || queue.stream().map(kv -> Etcd.text(kv.getKey())).anyMatch(k -> own(Primitive.RWLOCK, name, k));
        if (rw) {
            return Optional.of(Primitive.RWLOCK);
        }
        if (semaphoreMarkers) {
            return Optional.of(Primitive.SEMAPHORE);
        }
        if (queue.isEmpty()) {
            return Optional.empty();
        }
        boolean lockValues = queue.stream()
                .allMatch(kv -> ClaimMetadata.parse(Etcd.text(kv.getValue())).source() != ClaimMetadata.Source.UNKNOWN);
        return Optional.of(lockValues ? Primitive.LOCK : Primitive.ELECTION);
    }

    /** The primitive given with {@code --primitive}, else the one found; {@link ExitCode#NOTHING_HELD} when neither. */
    static Primitive resolve(Etcd etcd, String name, Primitive given) {
        if (given != null) {
            return given;
        }
        return detect(etcd, name).orElseThrow(() -> new CliFailure(ExitCode.NOTHING_HELD, "nothing holds or waits for "
                + name + ": no key under " + name + "/ and no marker of it (" + PHASE + name + ", " + LIMIT + name
                + "); check the name (etcdctl get --prefix --keys-only " + name + "/)"));
    }

    /**
     * Whether {@code key} is one of {@code name}'s own holder or waiter keys, not a key of a name nested under it:
     * {@code <name>/<one segment>} ({@code <lease hex>}, a semaphore's {@code <lease hex>-<n>}), for a read/write
     * lock {@code <name>/read/<one segment>} or {@code <name>/write/<one segment>}. A key of {@code /locks/orders}
     * ({@code /locks/orders/<lease hex>}) lies under {@code /locks/} but is never a holder of {@code /locks}.
     */
    static boolean own(Primitive kind, String name, String key) {
        if (!key.startsWith(name + "/")) {
            return false;
        }
        String rest = key.substring(name.length() + 1);
        if (kind == Primitive.RWLOCK) {
            rest = rest.startsWith("read/") ? rest.substring(5) : rest.startsWith("write/") ? rest.substring(6) : "/";
        }
        return !rest.isEmpty() && rest.indexOf('/') < 0;
    }

    /**
     * The name {@code key} belongs to: {@code name} for its own keys, else the nested name, told from the key's
     * shape: the key without its last segment, and without a {@code /read} or {@code /write} before it (a nested
     * read/write lock's key). A lock named {@code <name>/read} cannot be told from a read/write lock's reader of
     * {@code <name>} this way: {@code --primitive} names the kind.
     */
    static String owner(Primitive kind, String name, String key) {
        if (own(kind, name, key)) {
            return name;
        }
        String owner = key.substring(0, Math.max(0, key.lastIndexOf('/')));
        for (String mode : new String[] {"/read", "/write"}) {
            if (owner.endsWith(mode) && owner.length() - mode.length() > name.length()) {
                return owner.substring(0, owner.length() - mode.length());
            }
        }
        return owner;
    }

    /** The name as users write it: the primitive's lower-case name ({@code lock}, {@code rwlock}, ...). */
    static String label(Primitive p) {
        return p.name().toLowerCase(java.util.Locale.ROOT);
    }
}

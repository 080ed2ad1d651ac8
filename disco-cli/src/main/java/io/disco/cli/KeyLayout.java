package io.disco.cli;

import io.disco.core.ClaimMetadata;
import io.disco.core.Primitive;
import io.disco.provider.etcd.EtcdKeys;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import java.util.List;
import java.util.Optional;

/**
 * Which primitive a name is claimed as, told from the keys present (the layout is the provider's
 * {@link EtcdKeys}, the one the library writes and etcd's Go recipes share):
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

    private KeyLayout() {}

    /** @return the primitive of {@code name} from the keys present, or empty when no key of it exists */
    static Optional<Primitive> detect(Etcd etcd, String name) {
        TxnResponse r = etcd.await(
                () -> etcd.client()
                        .getKVClient()
                        .txn()
                        .Then(
                                Op.get(
                                        Etcd.bytes(name + "/"),
                                        GetOption.builder().isPrefix(true).build()),
                                Op.get(
                                        Etcd.bytes(EtcdKeys.phaseMarker(name)),
                                        GetOption.builder().withCountOnly(true).build()),
                                Op.get(
                                        Etcd.bytes(EtcdKeys.limitRecord(name)),
                                        GetOption.builder().withCountOnly(true).build()),
                                Op.get(
                                        Etcd.bytes(EtcdKeys.slots(name)),
                                        GetOption.builder()
                                                .isPrefix(true)
                                                .withCountOnly(true)
                                                .build()))
                        .commit(),
                "read of the keys of " + name);
        return kind(
                name,
                r.getGetResponses().get(0).getKvs(),
                r.getGetResponses().get(1).getCount() > 0,
                r.getGetResponses().get(2).getCount() > 0
                        || r.getGetResponses().get(3).getCount() > 0);
    }

    /**
     * The primitive of {@code name} from what was read of it: the keys under {@code name/}, whether its phase marker
     * exists, and whether a semaphore's limit record or slot keys exist; empty when none of it does.
     */
    static Optional<Primitive> kind(String name, List<KeyValue> queue, boolean phaseMarker, boolean semaphoreMarkers) {
        boolean rw = phaseMarker
                || queue.stream()
                        .map(kv -> Etcd.text(kv.getKey()))
                        .anyMatch(k -> EtcdKeys.isClaimOf(Primitive.RWLOCK, name, k));
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

    /** @return why nothing holds or waits for {@code name} on etcd: the keys looked for, and the etcdctl to look by hand */
    static String nothingHolds(String name) {
        return "nothing holds or waits for " + name + ": no key under " + name + "/ and no marker of it ("
                + EtcdKeys.phaseMarker(name) + ", " + EtcdKeys.limitRecord(name)
                + "); check the name (etcdctl get --prefix --keys-only " + name + "/)";
    }

    /** The name as users write it: the primitive's lower-case name ({@code lock}, {@code rwlock}, ...). */
    static String label(Primitive p) {
        return p.name().toLowerCase(java.util.Locale.ROOT);
    }
}

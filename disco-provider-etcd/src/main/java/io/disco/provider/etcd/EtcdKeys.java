package io.disco.provider.etcd;

import io.disco.core.Primitive;
import java.util.Objects;

/**
 * The keys this library writes on etcd for a name, per primitive: the one layout that the provider writes and the
 * {@code disco} tool reads. Every claim is a key under {@code <name>/}, leased, with the claimant's lease id in hex
 * as its last segment; the queue order is the keys' CreateRevision:
 * <ul>
 *   <li>lock and election: {@code <name>/<lease hex>} ({@link #own});</li>
 *   <li>read/write lock: {@code <name>/read/<lease hex>} and {@code <name>/write/<lease hex>}, and the read phase's
 *       marker {@link #phaseMarker} (not leased; the readers' token is its CreateRevision);</li>
 *   <li>semaphore: {@code <name>/<lease hex>}, further permits of one lease {@code <name>/<lease hex>-<n>}; the limit
 *       record {@link #limitRecord} (not leased) and the slot keys {@link #slot} (leased, value
 *       {@code <holder key>@<its CreateRevision>}; a slot's token is its ModRevision);</li>
 *   <li>{@code disco break}'s record of a broken holder key, {@link #breakRecord} (leased for a few minutes).</li>
 * </ul>
 * The markers live in namespaces of their own, outside every reasonable name's range, so that a claim on a name
 * never waits for them. etcd's Go recipes and {@code etcdctl lock}/{@code elect} write the same claim keys
 * ({@code <name>/<lease hex>}), which is how the two interoperate.
 */
public final class EtcdKeys {

    /** The namespace of read/write locks' phase markers: {@code disco-rwlock-phase:<name>}. */
    public static final String PHASE_NAMESPACE = "disco-rwlock-phase:";
    /** The namespace of semaphores' limit records: {@code disco-semaphore-limit:<name>}. */
    public static final String LIMIT_NAMESPACE = "disco-semaphore-limit:";
    /** The namespace of semaphores' slot keys: {@code disco-semaphore-slot:<name>/<i>}. */
    public static final String SLOT_NAMESPACE = "disco-semaphore-slot:";
    /** The namespace of {@code disco break}'s records: {@code disco-broken:<holder key>}. */
    public static final String BREAK_NAMESPACE = "disco-broken:";

    private EtcdKeys() {}

    /**
     * @param name the name
     * @return the prefix of every claim key of {@code name}: {@code <name>/} (for a read/write lock, its readers' and
     *     writers' ranges lie under it)
     */
    public static String queue(String name) {
        return Objects.requireNonNull(name, "name") + "/";
    }

    /**
     * @param name the name
     * @param leaseId the claimant's lease
     * @return the claim key of a lock, election or semaphore (its first permit) made on {@code leaseId}:
     *     {@code <name>/<lease hex>}
     */
    public static String own(String name, long leaseId) {
        return queue(name) + Long.toHexString(leaseId);
    }

    /**
     * The holder key of index {@code index} of lease {@code leaseHex} on {@code name}. Index 0 is
     * {@code <name>/<lease id in hex>}, the Go disco semaphore's key; index {@code n > 0} is
     * {@code <name>/<lease id in hex>-<n>}. Every one of them lies directly under {@code <name>/}, where
     * Go's semaphore and this library's count holders, so each counts as one holder for everybody. A key
     * never names another lease's holder ({@code '-'} is no hex digit). An index is taken by the lowest free
     * one when a service is made and freed when it is closed (the session's {@code HolderGroup}), with the
     * caveat of every kind's key reused after a close (a withdrawal that etcd had not confirmed within the
     * close's request timeout may still delete the incarnation a new claim adopted; that claim then fails as
     * lost, it never holds two places).
     */
    static String holder(String name, String leaseHex, int index) {
        return index == 0 ? name + "/" + leaseHex : name + "/" + leaseHex + "-" + index;
    }

    /**
     * @param name a read/write lock's name
     * @return the prefix of its readers' keys: {@code <name>/read/}
     */
    public static String readers(String name) {
        return queue(name) + "read/";
    }

    /**
     * @param name a read/write lock's name
     * @return the prefix of its writers' keys: {@code <name>/write/}
     */
    public static String writers(String name) {
        return queue(name) + "write/";
    }

    /**
     * @param name a read/write lock's name
     * @return its read phase's marker: {@code disco-rwlock-phase:<name>}
     */
    public static String phaseMarker(String name) {
        return PHASE_NAMESPACE + Objects.requireNonNull(name, "name");
    }

    /**
     * @param name a semaphore's name
     * @return its limit record: {@code disco-semaphore-limit:<name>}
     */
    public static String limitRecord(String name) {
        return LIMIT_NAMESPACE + Objects.requireNonNull(name, "name");
    }

    /**
     * @param name a semaphore's name
     * @return the prefix of its slot keys: {@code disco-semaphore-slot:<name>/}
     */
    public static String slots(String name) {
        return SLOT_NAMESPACE + queue(name);
    }

    /**
     * @param name a semaphore's name
     * @param slot the slot, from 0
     * @return the slot's key: {@code disco-semaphore-slot:<name>/<slot>}
     */
    public static String slot(String name, int slot) {
        return slots(name) + slot;
    }

    /**
     * @param holderKey a holder's claim key
     * @return the key of {@code disco break}'s record of it: {@code disco-broken:<holder key>}
     */
    public static String breakRecord(String holderKey) {
        return BREAK_NAMESPACE + Objects.requireNonNull(holderKey, "holderKey");
    }

    /**
     * Whether {@code key} is one of {@code name}'s own claim keys, not a key of a name nested under it:
     * {@code <name>/<one segment>} ({@code <lease hex>}, a semaphore's {@code <lease hex>-<n>}), for a read/write lock
     * {@code <name>/read/<one segment>} or {@code <name>/write/<one segment>}. A key of {@code /locks/orders}
     * ({@code /locks/orders/<lease hex>}) lies under {@code /locks/} but is never a claim of {@code /locks}.
     *
     * @param primitive what {@code name} is claimed as
     * @param name the name
     * @param key a key under {@code <name>/}
     * @return whether it is a claim of {@code name} itself
     */
    public static boolean isClaimOf(Primitive primitive, String name, String key) {
        if (!key.startsWith(queue(name))) {
            return false;
        }
        String rest = key.substring(name.length() + 1);
        if (primitive == Primitive.RWLOCK) {
            rest = rest.startsWith("read/") ? rest.substring(5) : rest.startsWith("write/") ? rest.substring(6) : "/";
        }
        return !rest.isEmpty() && rest.indexOf('/') < 0;
    }

    /**
     * The name a claim key under {@code <name>/} belongs to: {@code name} for its own, else the nested name, told
     * from the key's shape (the key without its last segment, and without a {@code /read} or {@code /write} before
     * it: a nested read/write lock's key). A lock named {@code <name>/read} cannot be told from a read/write lock's
     * reader of {@code <name>} this way.
     *
     * @param primitive what {@code name} is claimed as
     * @param name the name
     * @param key a key under {@code <name>/}
     * @return the name the key is a claim of
     */
    public static String nameOf(Primitive primitive, String name, String key) {
        if (isClaimOf(primitive, name, key)) {
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
}

package io.disco.fencing.guard;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * One {@link Guard} per resource key: one mark per lock name, per tenant, per row, so that tokens of
 * one lock never reject the owner of another. Fencing tokens are etcd revisions, global to the
 * cluster: under one mark for everything, the owner of lock A (token 10) would be rejected as soon
 * as the owner of lock B (token 11) wrote, although A still holds its lock.
 *
 * <p>Each key's guard is created on first use, with the settings of the {@link Guard.Builder} that
 * built this keyed guard: its mark starts at the key's stored mark, if the builder had a
 * {@link GuardStore}, or else at the builder's initial token. Every key's mark is persisted in that
 * one store. Built with an {@link IssuedBound}, every key's guard confirms tokens against one shared
 * confirmed bound: the coordination service's revisions are global, so a revision confirmed for one
 * key bounds the tokens of every key, and a new owner of any key costs at most one read. A key's
 * guard stays for the life of this object (its memory per idle key is measured in
 * the benchmarks), so keys should name resources, not requests.
 *
 * <p>{@link GuardFilter} and {@link GuardServerInterceptor} take a keyed guard with a function
 * that names the key of each request. Thread-safe.
 */
public final class KeyedGuard {

    private final ConcurrentHashMap<String, Guard> guards = new ConcurrentHashMap<>();
    private final Function<String, Guard> factory;
    private final GuardListener listener;

    KeyedGuard(Function<String, Guard> factory, GuardListener listener) {
        this.factory = factory;
        this.listener = listener;
    }

    /** A request carried no usable token or named no key: tells the listener. */
    void malformed() {
        if (listener != null) {
            listener.rejected(null, null, GuardListener.Rejection.MALFORMED);
        }
    }

    /**
     * A keyed guard in memory, with the default drain timeout; {@link Guard#builder()} sets the rest.
     *
     * @return a new keyed guard
     */
    public static KeyedGuard create() {
        return Guard.builder().buildKeyed();
    }

    /**
     * The guard of {@code key}, created on first use.
     *
     * @param key the resource key; not blank
     * @return its guard, the same instance on every call
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code key} is blank
     */
    public Guard forKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isBlank()) {
            throw new IllegalArgumentException("resource key must not be blank, got '" + key + "'");
        }
        Guard g = guards.get(key);
        return g != null ? g : guards.computeIfAbsent(key, factory);
    }

    /** @return the number of keys with a guard */
    public int size() {
        return guards.size();
    }

    @Override
    public String toString() {
        return "KeyedGuard[keys=" + guards.size() + "]";
    }
}

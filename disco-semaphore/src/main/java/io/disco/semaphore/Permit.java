package io.disco.semaphore;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.Objects;

/**
 * Proof of one held permit of a distributed semaphore: its holder key, its slot and its token.
 *
 * <p>A semaphore has {@code limit} holders at once, so one high-water mark over all of them would
 * reject a valid holder as soon as a newer one wrote. Each holder therefore also holds a
 * <b>slot</b> in {@code 0 .. limit-1} that no other current holder has, and its token is strictly
 * greater than that of every earlier holder of the same slot. A resource guards per slot (a
 * {@code KeyedGuard} keyed by {@link #guardKey()}): it rejects a zombie whose slot has been given to
 * a newer holder, and never rejects a valid holder.
 *
 * @param name the semaphore's name
 * @param key the holder's key in the backend
 * @param slot the slot, {@code 0 <= slot < limit}
 * @param token the fencing token, strictly increasing per slot
 */
public record Permit(String name, String key, int slot, FencingToken token) implements Fenced {

    /**
     * Checks the components.
     *
     * @param name the semaphore's name
     * @param key the holder's key in the backend
     * @param slot the slot, {@code 0 <= slot < limit}
     * @param token the fencing token, strictly increasing per slot
     * @throws NullPointerException if {@code name}, {@code key} or {@code token} is null
     * @throws IllegalArgumentException if {@code slot} is negative
     */
    public Permit {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        if (slot < 0) {
            throw new IllegalArgumentException("slot must not be negative, got " + slot);
        }
    }

    /** @return the key to guard this permit's writes under: the semaphore's name and the slot */
    public String guardKey() {
        return name + "#" + slot;
    }

    @Override
    public String toString() {
        return "Permit[" + guardKey() + ", token=" + token + ", key=" + key + "]";
    }
}

package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where a {@link Guard}'s mark (or every mark of a {@link KeyedGuard}) survives a restart of the
 * resource process. The guard calls {@link #load()} once when it is built and {@link #persist} each
 * time a mark is about to advance (once per new owner of a key, never per request), and accepts the
 * higher token only after {@code persist} has returned: whatever was accepted is in the store.
 *
 * <p>An implementation keeps the highest mark it was given per key (a call with a lower mark than
 * the stored one must not lower it) and is safe for calls from several threads. A single guard
 * persists under the empty key.
 */
public interface GuardStore {

    /**
     * The marks persisted so far.
     *
     * @return the mark per key; empty when nothing has been persisted
     * @throws IOException if the store cannot be read (the guard is then not built)
     */
    Map<String, FencingToken> load() throws IOException;

    /**
     * Makes {@code mark} the persisted mark of {@code key}, durably, before returning.
     *
     * @param key the resource key ({@code ""} for a single guard)
     * @param mark the new mark
     * @throws IOException if it could not be persisted (the guard then refuses the request that
     *     carried the higher token and keeps its mark)
     */
    void persist(String key, FencingToken mark) throws IOException;

    /**
     * Maintenance only ({@link Guard#lowerMark}): makes {@code mark} the persisted mark of {@code key}
     * even though it is lower than the stored one, durably, before returning. The guard calls it only
     * for a mark it has checked against the coordination service's current revision.
     *
     * @param key the resource key ({@code ""} for a single guard)
     * @param mark the new, lower mark
     * @throws IOException if it could not be persisted (the guard then keeps its mark)
     * @throws UnsupportedOperationException if this store cannot lower a mark (the default)
     */
    default void lower(String key, FencingToken mark) throws IOException {
        throw new UnsupportedOperationException(getClass().getName() + " cannot lower a persisted mark");
    }

    /**
     * A store in one file, which holds every key's mark. Each {@link #persist} writes a new file
     * next to it, forces it to disk, renames it over the old one atomically and forces the
     * directory: a crash at any instant leaves either the old or the new marks, never a torn file.
     * The file's parent directory must exist; the file itself is created on the first persist. One
     * process, and in it one guard, per file.
     *
     * @param file the file
     * @return the store
     */
    static GuardStore file(Path file) {
        return new FileGuardStore(file);
    }
}

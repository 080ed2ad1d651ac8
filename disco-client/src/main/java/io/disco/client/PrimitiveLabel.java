package io.disco.client;

import io.disco.core.Primitive;

/**
 * How the client words a primitive in its messages and in {@link Holding#primitive()}: a name in use is used as
 * one primitive at a time ({@link Registry#join}), made by {@link Disco#lock(String)} ({@code lock}), {@link
 * Disco#readWriteLock(String)} ({@code read/write lock}), {@link Disco#semaphore(String, int)} ({@code semaphore}),
 * or {@link Disco#election(String)} and {@link Disco#leadershipRunner} ({@code election}).
 */
final class PrimitiveLabel {

    private PrimitiveLabel() {}

    /** @return the word for {@code primitive}: {@code lock}, {@code read/write lock}, {@code semaphore}, {@code election} */
    static String of(Primitive primitive) {
        return switch (primitive) {
            case LOCK -> "lock";
            case RWLOCK -> "read/write lock";
            case SEMAPHORE -> "semaphore";
            case ELECTION -> "election";
        };
    }
}

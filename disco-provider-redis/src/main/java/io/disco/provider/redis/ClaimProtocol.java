package io.disco.provider.redis;

/**
 * How one primitive queues on Redis: the hooks a queue service supplies to the acquire machine. What they share (the
 * claim, the waiting, the commit, the release, the loss) is not here, and admission is the scripts' (by the claim's
 * {@link ClaimKind}): a primitive says only how an admitted claim becomes its grant, its semaphore limit, and how
 * its grants are called.
 *
 * @param <G> the grant
 */
abstract class ClaimProtocol<G> {

    /** The primitive's name. */
    final String name;
    /** What the primitive is, for messages: "lock", "read/write lock", "semaphore", "election". */
    private final String what;

    ClaimProtocol(String name, String what) {
        this.name = name;
        this.what = what;
    }

    /** @return what this is, for messages */
    final String what() {
        return what;
    }

    /**
     * Makes the grant of an admitted claim.
     *
     * @param key the claim's key
     * @param kind its kind
     * @param token its token
     * @param slot its semaphore slot, or -1
     * @param value the value it was enqueued with (a candidate's), or ""
     * @return the grant
     */
    abstract G grant(String key, ClaimKind kind, long token, int slot, String value);

    /** @return the semaphore's limit; 0 for the other primitives */
    int limit() {
        return 0;
    }

    /** @return how a grant of {@code kind} is called in messages */
    String modeName(ClaimKind kind) {
        return kind.mode();
    }
}

package io.disco.provider.redis;

/** The kind of a claim, as its key's {@code kind} field says it ({@link RedisKeys}); the scripts admit by it. */
enum ClaimKind {
    /** A lock's claim: admitted when first. */
    LOCK("x", "lock"),
    /** An election candidate's: admitted (leads) when first; its term is logged. */
    LEADER("e", "leadership"),
    /** A reader's: admitted when no writer is ahead; readers of one phase share a token. */
    READ("r", "read"),
    /** A writer's: admitted when first. */
    WRITE("w", "write"),
    /** A semaphore permit's: admitted among the first {@code limit}, in the lowest free slot. */
    PERMIT("p", "permit");

    private final String code;
    private final String mode;

    ClaimKind(String code, String mode) {
        this.code = code;
        this.mode = mode;
    }

    /** @return the kind as the claim's key holds it */
    String code() {
        return code;
    }

    /** @return how a grant of this kind is called in messages */
    String mode() {
        return mode;
    }

    /** @return the kind of {@code code}, or null */
    static ClaimKind of(String code) {
        for (ClaimKind k : values()) {
            if (k.code.equals(code)) {
                return k;
            }
        }
        return null;
    }
}

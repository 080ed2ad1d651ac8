package io.disco.fencing;

/**
 * A request carried a fencing token lower than the highest one the resource has already accepted:
 * it comes from a stale owner whose lock, read phase or leadership has since passed to another.
 */
public class TokenStaleException extends DiscoException {

    /** The rejected token. */
    private final FencingToken token;
    /** The highest token the resource had accepted when it rejected {@link #token}. */
    private final FencingToken highWater;

    /**
     * @param token the rejected token
     * @param highWater the highest token the resource had accepted when it rejected {@code token}
     */
    public TokenStaleException(FencingToken token, FencingToken highWater) {
        super("stale fencing token " + token + ": the resource has already accepted " + highWater);
        this.token = token;
        this.highWater = highWater;
    }

    /** @return the rejected token */
    public FencingToken token() {
        return token;
    }

    /** @return the high-water mark at the time of rejection */
    public FencingToken highWater() {
        return highWater;
    }
}

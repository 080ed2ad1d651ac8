package io.disco.fencing.guard;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;

/**
 * A request carried a token above every revision the coordination service had reached when the
 * guard asked it ({@link IssuedBound}): no coordination service issued that token, so it comes
 * from a buggy or hostile client, not from a stale or current owner. It is refused and the mark
 * does not move. HTTP answers {@code 400 Bad Request} and gRPC {@code INVALID_ARGUMENT}: like a
 * malformed token it is the client's own error, which a retry with the same token will not cure
 * (unlike {@code 409}/{@code ABORTED}, which tell a stale owner that someone newer holds the
 * resource, and unlike {@code 503}/{@code UNAVAILABLE}, which invite a retry).
 */
public class TokenNotIssuedException extends DiscoException {

    private final transient FencingToken token;
    private final transient FencingToken bound;

    /**
     * @param token the refused token
     * @param bound the coordination service's revision the guard confirmed, which {@code token} exceeds
     */
    public TokenNotIssuedException(FencingToken token, FencingToken bound) {
        super("fencing token " + token.value() + " was not issued: the coordination service's revision is "
                + bound.value());
        this.token = token;
        this.bound = bound;
    }

    /** @return the refused token */
    public FencingToken token() {
        return token;
    }

    /** @return the confirmed revision the token exceeded */
    public FencingToken bound() {
        return bound;
    }
}

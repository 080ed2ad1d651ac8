package io.disco.fencing.guard;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;

/**
 * A token above the guard's confirmed bound could not be confirmed: the coordination service did
 * not answer the read of its current revision ({@link IssuedBound}) within the guard's bound
 * timeout, or failed it. The request is refused unconfirmed (never admitted), nothing of it ran
 * and the mark did not move; tokens at or below the confirmed bound are still admitted meanwhile.
 * The client may retry: HTTP answers {@code 503} with {@code Retry-After}, gRPC
 * {@code UNAVAILABLE}. The read's failure, when there was one, is the {@linkplain #getCause() cause}.
 */
public class BoundUnavailableException extends DiscoException {

    private final transient FencingToken token;

    /**
     * @param token the refused token
     * @param message why it could not be confirmed
     * @param cause the read's failure, or null
     */
    public BoundUnavailableException(FencingToken token, String message, Throwable cause) {
        super("fencing token " + token.value() + " not admitted: " + message + "; retry", cause);
        this.token = token;
    }

    /** @return the refused token */
    public FencingToken token() {
        return token;
    }
}

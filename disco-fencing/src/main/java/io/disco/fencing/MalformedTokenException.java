package io.disco.fencing;

/**
 * Thrown by {@link FencingToken#parse(CharSequence)} when the text is not a valid token; the message
 * names the problem. A guarded server answers such a request as a client error (HTTP 400,
 * gRPC {@code INVALID_ARGUMENT}).
 */
public class MalformedTokenException extends IllegalArgumentException {

    /**
     * @param message what is wrong with the token text
     */
    public MalformedTokenException(String message) {
        super(message);
    }
}

package io.disco.fencing;

/**
 * Base of every unchecked exception this library throws for a coordination failure: a lost lease,
 * a stale token, or a backend (etcd) that failed or could not be reached in time. The backend's own
 * exception, when there is one, is attached as the {@linkplain #getCause() cause}.
 */
public class DiscoException extends RuntimeException {

    /**
     * @param message what went wrong
     */
    public DiscoException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public DiscoException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.disco.fencing;

/**
 * The backend refused a request for lack of permission or authentication (for etcd: permission
 * denied, an authentication failure, an invalid user). It is not retried: waiting would not change
 * the answer. An acquisition that meets it fails with it promptly, whether or not it has a timeout;
 * the backend's own exception is the {@linkplain #getCause() cause}.
 */
public class AccessDeniedException extends DiscoException {

    /**
     * @param message what was refused
     * @param cause the backend's exception
     */
    public AccessDeniedException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.disco.fencing.guard;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import java.time.Duration;

/**
 * An admission with a newer token was refused because actions admitted with older tokens were still
 * running when the guard's drain timeout passed. Nothing of the refused request ran; the newer token
 * stays the mark (older tokens are still rejected), so the client may simply retry: HTTP answers
 * {@code 503} with {@code Retry-After}, gRPC {@code UNAVAILABLE}.
 */
public class DrainTimeoutException extends DiscoException {

    private final transient FencingToken token;

    /**
     * @param token the refused token
     * @param drainTimeout how long the admission waited
     */
    public DrainTimeoutException(FencingToken token, Duration drainTimeout) {
        super("token " + token.value() + " not admitted: actions with older tokens were still running after "
                + drainTimeout.toMillis() + " ms; retry");
        this.token = token;
    }

    /** @return the refused token */
    public FencingToken token() {
        return token;
    }
}

package io.disco.fencing.guard;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * How a {@link GuardFilter} answers a request it rejects: the status, headers ({@code Retry-After: 1}
 * with a 503 is set before) and body. The default writes the status and a {@code text/plain} one-line
 * reason; a framework integration may write an RFC 9457 problem detail instead
 * ({@link GuardFilter#rejectingWith}). It runs on the request's thread, the chain is not called, and the
 * guard's mark is as the rejection left it.
 */
@FunctionalInterface
public interface GuardRejections {

    /**
     * Writes the answer to a rejected request.
     *
     * @param request the rejected request
     * @param response its response, not committed; the status is not set yet
     * @param rejection why it was rejected, with the status to send
     * @throws IOException if writing fails
     */
    void reject(HttpServletRequest request, HttpServletResponse response, GuardRejection rejection) throws IOException;
}

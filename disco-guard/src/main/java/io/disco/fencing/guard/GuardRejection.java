package io.disco.fencing.guard;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Optional;

/**
 * Why a {@link GuardFilter} rejected a request, handed to its {@link GuardRejections} to write the answer.
 *
 * @param status the HTTP status the filter chose: 400, 409 or 503
 * @param reason the kind of rejection
 * @param detail a one-line human-readable reason (the plain-text body by default)
 * @param token the request's token, when it had a well-formed one
 * @param mark the guard's mark the token was compared with (409), or the confirmed bound it exceeded
 *     ({@link Reason#NOT_ISSUED}); empty otherwise
 */
public record GuardRejection(
        int status, Reason reason, String detail, Optional<FencingToken> token, Optional<FencingToken> mark) {

    /** The kinds of rejection, each with its status. */
    public enum Reason {
        /** 400: no token header, several, or a malformed value. */
        MALFORMED,
        /** 400: a keyed filter found no resource key in the request. */
        NO_KEY,
        /** 400: a token above anything the coordination service issued. */
        NOT_ISSUED,
        /** 409: a token lower than the guard's mark: a newer owner was admitted. */
        STALE,
        /** 503: requests with older tokens were still running after the drain timeout. */
        DRAIN_TIMEOUT,
        /** 503: the store failed, the issued bound could not be confirmed, or the wait was interrupted. */
        UNAVAILABLE
    }

    /**
     * The rejection of a request whose admission failed with {@code failure}, as the guard's HTTP filters answer
     * it: a malformed token 400, a stale one 409 (with the guard's mark), one above the issued bound 400 (with the
     * bound), a drain timeout 503, an unavailable bound or store 503, an interrupted wait 503 (the caller restores
     * the thread's interrupt).
     *
     * @param failure what {@link FencingHttp#parseHeader} or {@link Guard#admit} threw
     * @return the rejection to answer with
     * @throws IllegalArgumentException if {@code failure} is not one of those
     */
    public static GuardRejection of(Exception failure) {
        if (failure instanceof MalformedTokenException) {
            return new GuardRejection(400, Reason.MALFORMED, failure.getMessage(), Optional.empty(), Optional.empty());
        }
        if (failure instanceof TokenStaleException e) {
            return new GuardRejection(
                    409, Reason.STALE, e.getMessage(), Optional.of(e.token()), Optional.of(e.highWater()));
        }
        if (failure instanceof TokenNotIssuedException e) {
            return new GuardRejection(
                    400, Reason.NOT_ISSUED, e.getMessage(), Optional.of(e.token()), Optional.of(e.bound()));
        }
        if (failure instanceof DrainTimeoutException e) {
            return new GuardRejection(
                    503, Reason.DRAIN_TIMEOUT, e.getMessage(), Optional.of(e.token()), Optional.empty());
        }
        if (failure instanceof BoundUnavailableException e) {
            return new GuardRejection(
                    503, Reason.UNAVAILABLE, e.getMessage(), Optional.of(e.token()), Optional.empty());
        }
        if (failure instanceof UncheckedIOException) {
            return new GuardRejection(
                    503, Reason.UNAVAILABLE, failure.getMessage(), Optional.empty(), Optional.empty());
        }
        if (failure instanceof InterruptedException) {
            return new GuardRejection(
                    503,
                    Reason.UNAVAILABLE,
                    "interrupted while waiting for older requests to finish; retry",
                    Optional.empty(),
                    Optional.empty());
        }
        throw new IllegalArgumentException("not a failure of a request's admission: " + failure, failure);
    }

    /**
     * Checks the components.
     *
     * @param status the HTTP status the filter chose
     * @param reason the kind of rejection
     * @param detail a one-line human-readable reason
     * @param token the request's token, when it had a well-formed one
     * @param mark the mark or bound the token was compared with; empty otherwise
     * @throws NullPointerException if an argument is null
     */
    public GuardRejection {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(mark, "mark");
    }
}

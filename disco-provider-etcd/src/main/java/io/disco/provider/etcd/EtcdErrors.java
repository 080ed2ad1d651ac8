package io.disco.provider.etcd;

import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * What an etcd failure means: whether sending the request again may cure it, whether etcd refused
 * access, whether a lease is gone; and how it reaches the user (as a {@link DiscoException} with the
 * jetcd failure as its cause, never a raw {@link ExecutionException}). Pure functions.
 */
final class EtcdErrors {

    private EtcdErrors() {}

    /** The failure of {@code what} as the library's exception: an {@link AccessDeniedException} when etcd refused access. */
    static DiscoException failure(String what, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof DiscoException) {
            return (DiscoException) cause;
        }
        if (isAccessDenied(cause)) {
            return new AccessDeniedException("etcd refused the " + what + ": " + cause.getMessage(), cause);
        }
        return new DiscoException("etcd " + what + " failed: " + cause.getMessage(), cause);
    }

    /** The gRPC status code of an etcd failure (jetcd reports them as {@link EtcdException}s), or null for anything else. */
    private static io.grpc.Status.Code statusCode(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof EtcdException) {
                try {
                    return io.grpc.Status.Code.valueOf(
                            ((EtcdException) c).getErrorCode().name());
                } catch (IllegalArgumentException unknown) {
                    return io.grpc.Status.Code.UNKNOWN;
                }
            }
            if (c instanceof io.grpc.StatusRuntimeException || c instanceof io.grpc.StatusException) {
                return io.grpc.Status.fromThrowable(c).getCode();
            }
        }
        return null;
    }

    /**
     * Whether sending the request again may succeed: no answer in time, a member or leader that is
     * unavailable, a broken stream, an overloaded server. Not: permission or authentication refused,
     * a bad argument, a failed precondition, compaction, a bug.
     */
    static boolean isTransient(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof DiscoException) {
            return c.getCause() instanceof TimeoutException
                    || (c.getCause() != null && statusCode(c.getCause()) != null && isTransient(c.getCause()));
        }
        io.grpc.Status.Code code = statusCode(c);
        if (code == null) {
            return c instanceof TimeoutException;
        }
        switch (code) {
            case UNAVAILABLE:
            case DEADLINE_EXCEEDED:
            case RESOURCE_EXHAUSTED:
            case ABORTED:
            case CANCELLED:
            case UNKNOWN:
            case INTERNAL:
                return true;
            default:
                return false;
        }
    }

    /** etcd's permission denied, invalid auth token, and "authentication failed, invalid user ID or password". */
    static boolean isAccessDenied(Throwable t) {
        io.grpc.Status.Code code = statusCode(unwrap(t));
        if (code == io.grpc.Status.Code.PERMISSION_DENIED || code == io.grpc.Status.Code.UNAUTHENTICATED) {
            return true;
        }
        String m = String.valueOf(unwrap(t).getMessage());
        return code != null
                && (m.contains("authentication failed")
                        || m.contains("user name not found")
                        || m.contains("permission denied"));
    }

    /** etcd's answer for a lease that was revoked or expired, as jetcd reports it. */
    static boolean isLeaseNotFound(Throwable t) {
        Throwable cause = unwrap(t);
        if (cause instanceof EtcdException) {
            return ((EtcdException) cause).getErrorCode() == ErrorCode.NOT_FOUND;
        }
        return io.grpc.Status.fromThrowable(cause).getCode() == io.grpc.Status.Code.NOT_FOUND;
    }

    /**
     * The most specific message in {@code t}'s causes: jetcd reports a failed authentication as
     * {@code UNAUTHENTICATED}, with etcd's own words ("authentication failed, invalid user ID or password")
     * in its cause.
     */
    static String deepestMessage(Throwable t) {
        String message = String.valueOf(t.getMessage());
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                message = c.getMessage();
            }
        }
        return message;
    }

    /** The failure inside the wrappers of futures ({@link CompletionException}, {@link ExecutionException}). */
    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}

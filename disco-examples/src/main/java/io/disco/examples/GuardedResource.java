package io.disco.examples;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;

/**
 * The resource of the in-process scenarios: a write to it is accepted when its {@link Guard} passes the writer's
 * token, and rejected when the token is stale (below the guard's mark).
 */
public final class GuardedResource {

    private GuardedResource() {}

    /**
     * Writes with {@code token} to the resource that {@code guard} protects.
     *
     * @param guard the resource's guard
     * @param token the writer's fencing token
     * @return whether the write was accepted; false when the token is stale
     */
    public static boolean accepts(Guard guard, FencingToken token) {
        try {
            guard.check(token);
            return true;
        } catch (TokenStaleException e) {
            return false;
        }
    }
}

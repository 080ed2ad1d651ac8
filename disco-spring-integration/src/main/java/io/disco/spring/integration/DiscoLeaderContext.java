package io.disco.spring.integration;

import io.disco.election.Leadership;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import org.springframework.integration.leader.Context;

/**
 * The {@link Context} of one leadership term of a {@link DiscoLeaderInitiator}: what its candidate's
 * {@code onGranted}/{@code onRevoked} and the {@code OnGrantedEvent}/{@code OnRevokedEvent} it publishes
 * carry, with the term's fencing token.
 */
public interface DiscoLeaderContext extends Context, Fenced {

    /**
     * @return the term's fencing token, strictly greater than every earlier term's of the election in any
     *         instance; it stays the same after the term ends (a resource that checks it rejects it once a newer
     *         leader has written)
     */
    @Override
    FencingToken token();

    /** @return the term's leadership: key, value (the candidate's id) and token */
    Leadership leadership();

    /** @return whether the term is still active */
    @Override
    boolean isLeader();

    /**
     * Steps down if the term is active: the term ends ({@code onRevoked}, {@code OnRevokedEvent}), the next
     * candidate in line leads, and this one campaigns again behind it. Returns once the request is recorded.
     */
    @Override
    void yield();
}

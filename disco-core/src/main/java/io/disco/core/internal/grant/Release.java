package io.disco.core.internal.grant;

/**
 * The release of a held grant, from the moment it starts: the grant is given up then (never handed out again),
 * and the release stays <em>unconfirmed</em> until its backend answers the delete, finds the claim gone after a
 * copy that may have been applied, or the owner ends (issue 44).
 *
 * @param <H> the held grant
 */
public interface Release<H> {

    /** @return the grant given up, held again if the backend refuses the delete for good */
    H held();

    /** @return whether a caller was told that the release is unconfirmed: the grant can no longer be held again */
    boolean givenUp();

    /** @return whether a copy of the delete may have been applied: the grant can no longer be held again */
    boolean maybeApplied();
}

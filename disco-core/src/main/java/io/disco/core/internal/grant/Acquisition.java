package io.disco.core.internal.grant;

/**
 * One acquisition of a service, as its {@link GrantLedger} sees it: the backend's claim (an etcd key, a ZooKeeper
 * node), created and waited for by the backend, answered through these hooks. They are called under the ledger's
 * monitor: they complete a future and return, never blocking or calling out.
 *
 * @param <G> the grant
 */
public interface Acquisition<G> {

    /** @return whether it is one try: it answers at once rather than wait behind an unconfirmed release */
    boolean tryOnly();

    /**
     * Answers the caller at once, without a claim of its own: with the grant the service holds already, or with
     * null (a try that found the last release unconfirmed, something in the way). Nothing of it is left to withdraw.
     *
     * @param held the held grant, or null
     */
    void answerAtOnce(G held);

    /**
     * Hands {@code grant} to the caller: the commit point. Either the caller gets the grant and the service holds
     * it, or the caller's giving up came first and the claim is withdrawn; never neither.
     *
     * @param grant the grant the claim won
     * @return false if the caller gave up first
     */
    boolean handOver(G grant);

    /**
     * Gives the acquisition up with {@code cause} (the service's loss or close): its caller sees {@code cause}, and
     * the backend withdraws its claim. Called outside the ledger's monitor; idempotent.
     *
     * @param cause why
     */
    void fail(Throwable cause);
}

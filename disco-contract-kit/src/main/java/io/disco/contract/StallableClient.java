package io.disco.contract;

import io.disco.client.DiscoBackend;

/**
 * A client's backend whose link to the servers the kit can stall, for the rules about requests that get no
 * answer in time (a release whose answer never comes back): see {@link UnconfirmedReleaseContract#stallableBackend}.
 *
 * @param backend the client's backend, as {@code TestableBackend.withTtl(ttl)} makes it, with the request
 *                timeout the kit asked for
 * @param link    the link between that backend and the servers
 */
public record StallableClient(DiscoBackend backend, Link link) {

    /**
     * The link between one client and the servers. While stalled nothing the client sends is delivered and
     * nothing comes back, yet nothing is lost: on {@link #resume()} what was sent is delivered and applied, as by
     * a member frozen with SIGSTOP and resumed. A stall is kept shorter than the owners' time to live, so the
     * owners' leases survive it.
     */
    public interface Link {

        /** Stops the link; returns at once. */
        void stall();

        /** Delivers what was held back and lets the link run again; returns at once. */
        void resume();
    }
}

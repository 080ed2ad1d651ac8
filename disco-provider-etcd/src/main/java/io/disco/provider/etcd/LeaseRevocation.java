package io.disco.provider.etcd;

import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The revoke of a session's lease, which deletes every key on it at once: once when the session closes,
 * also after a loss (one detected only locally may have left the lease alive on the server, with its keys),
 * and in the background for a lease that was never handed out. Best effort: a lease not revoked expires
 * after its TTL, and a failure is logged saying so. Nothing is sent once the application closed the client.
 */
final class LeaseRevocation {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseRevocation.class);

    private final Client client;
    private final long leaseId;
    private final long ttlSeconds;
    private final Duration requestTimeout;
    /** The client's connection: whether the application closed the client. */
    private final EtcdEndpoints endpoints;

    LeaseRevocation(Client client, GrantedLease granted, Duration requestTimeout) {
        this.client = client;
        this.leaseId = granted.id();
        this.ttlSeconds = granted.ttlSeconds();
        this.requestTimeout = requestTimeout;
        this.endpoints = EtcdEndpoints.of(client);
    }

    /**
     * Revokes the lease without waiting for the answer: for a lease that was never handed out (it has no
     * keys), so a failure only leaves it to expire after its TTL.
     */
    void revokeInBackground() {
        try {
            client.getLeaseClient().revoke(leaseId).whenComplete((r, e) -> {
                if (e != null) {
                    LOG.debug(
                            "could not revoke etcd lease {} (never handed out, no keys); it expires after its TTL of {} s: {}",
                            GrantedLease.hex(leaseId),
                            ttlSeconds,
                            String.valueOf(e));
                }
            });
        } catch (RuntimeException e) {
            LOG.debug(
                    "could not revoke etcd lease {} (never handed out, no keys): {}",
                    GrantedLease.hex(leaseId),
                    String.valueOf(e));
        }
    }

    /**
     * Revokes the lease, once, waiting at most the request timeout; also after a loss: one detected
     * only here (no renewal answered in time) may have left the lease alive on the server, with its
     * keys. Best effort: a failure is logged (the lease then expires after its TTL).
     */
    void revoke() {
        if (endpoints.closed()) {
            LOG.debug(
                    "etcd lease {} is not revoked: {}; it expires after its TTL of {} s",
                    GrantedLease.hex(leaseId),
                    EtcdEndpoints.CLOSED_FIRST,
                    ttlSeconds);
            return;
        }
        try {
            client.getLeaseClient().revoke(leaseId).get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            if (EtcdErrors.isLeaseNotFound(e.getCause())) {
                LOG.debug("etcd lease {} was already gone when the session closed", GrantedLease.hex(leaseId));
            } else {
                LOG.warn(
                        "could not revoke etcd lease {}; it expires after its TTL of {} s",
                        GrantedLease.hex(leaseId),
                        ttlSeconds,
                        e);
            }
        } catch (TimeoutException | RuntimeException e) {
            LOG.warn(
                    "could not revoke etcd lease {}; it expires after its TTL of {} s",
                    GrantedLease.hex(leaseId),
                    ttlSeconds,
                    e);
        }
    }
}

package io.disco.provider.etcd;

import io.disco.core.DiscoSession;
import io.disco.core.internal.Callbacks;
import io.disco.core.internal.SessionEvents;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's life across its parts, from its hand-out to its end. Its duties: hand the session out only
 * with half its TTL of validity ({@link HandOutRenewal}), then start keeping the lease alive and follow the
 * application's closing of the jetcd client; and run the two endings of a session: its loss (the lease's,
 * or the client closed under it) and its close, each told to every service of the {@link ServiceRegistry},
 * to the janitor ({@link LateCreates}), to the listeners, and to {@link #done()}. It knows no kind of
 * service: only {@link SessionMember}s. {@link SessionCore} wires it.
 */
final class SessionLifetime {

    private static final Logger LOG = LoggerFactory.getLogger(SessionLifetime.class);

    /** The session as its listeners see it. */
    private final DiscoSession front;

    private final LeaseKeeper lease;
    private final HandOutRenewal handOut;
    private final LeaseRevocation revocation;
    private final ServiceRegistry services;
    private final LateCreates lateCreates;
    private final SessionExecutors executors;
    private final SessionEvents events;
    private final Callbacks callbacks;
    private final Duration requestTimeout;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    /** The client's connection: whether the application closed the client under this session. */
    private final EtcdEndpoints endpoints;
    /** Told when the application closes the client: the lease can no longer be renewed. */
    private final Runnable onClientClosed = this::clientClosed;

    SessionLifetime(
            DiscoSession front,
            LeaseKeeper lease,
            HandOutRenewal handOut,
            LeaseRevocation revocation,
            ServiceRegistry services,
            LateCreates lateCreates,
            SessionExecutors executors,
            SessionEvents events,
            Callbacks callbacks,
            EtcdEndpoints endpoints,
            Duration requestTimeout) {
        this.front = front;
        this.lease = lease;
        this.handOut = handOut;
        this.revocation = revocation;
        this.services = services;
        this.lateCreates = lateCreates;
        this.executors = executors;
        this.events = events;
        this.callbacks = callbacks;
        this.endpoints = endpoints;
        this.requestTimeout = requestTimeout;
    }

    /**
     * Makes sure the lease is valid for at least half its TTL before the session is handed out (renewing
     * it first if the grant was answered late: {@link HandOutRenewal}), then starts
     * keeping it alive. If it cannot be made so, the session ends unseen: its threads stop and its lease
     * (which has no keys) is revoked.
     *
     * @throws io.disco.fencing.DiscoException if the lease cannot be handed out with half its TTL
     */
    void start() {
        try {
            handOut.run();
        } catch (RuntimeException | Error e) {
            lease.close();
            revocation.revokeInBackground();
            executors.shutdown();
            throw e;
        }
        lease.start();
        endpoints.onClosed(onClientClosed);
    }

    /**
     * The application closed the client under this session: the lease is lost at once, with that reason,
     * instead of renewals failing until its validity runs out (and no revoke is tried). Any thread.
     */
    private void clientClosed() {
        DiscoException loss = lease.clientClosed();
        if (loss != null) {
            SessionExecutors.schedule(executors.leaseTimer, () -> lost(loss), 0);
        }
    }

    /** @return the reason the lease was lost, or null while alive or after a plain close */
    DiscoException lossCause() {
        if (endpoints.closed() && lease.state() == LeaseState.ALIVE) {
            clientClosed(); // asked before the channel's own notice arrived
        }
        return lease.lossCause();
    }

    /** Completes, once, when the lease is lost or the session closed; on the callback executor. */
    CompletableFuture<Void> done() {
        return done;
    }

    /** Tells every service and completes {@link #done()}; on the lease thread, outside the lease's lock. */
    void lost(DiscoException cause) {
        endpoints.forget(onClientClosed);
        LOG.warn("{}; lost with it: {}", cause.getMessage(), services.describe(), cause.getCause());
        lateCreates.close();
        for (SessionMember m : services.all()) {
            m.sessionLost(cause);
        }
        events.tell(l -> l.lost(front, cause)); // after the services' grantLost and acquisitionFailed
        callbacks.deliver(() -> done.complete(null));
    }

    /**
     * Revokes the lease (releasing everything held through it), finishes every service of the
     * session and stops its threads. Waits at most the request timeout for etcd. Idempotent.
     */
    void close() {
        SessionThread.refuseOnSessionThread("EtcdSession.close()");
        endpoints.forget(onClientClosed);
        if (endpoints.closed()) {
            // Closed after the client: what is held is lost, not released (nothing can be sent), and says why.
            DiscoException loss = lease.clientClosed();
            if (loss != null) {
                lost(loss);
            } else {
                // The channel's watcher marked the loss and tells the services on the lease timer: let it, before
                // they are closed below (a hold would otherwise end as closed, not lost, and its last unlock say
                // nothing), and before the timer is shut down with that task still in it.
                try {
                    done.get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException e) {
                    // told or not, the close goes on
                }
            }
        }
        if (!lease.close()) {
            return;
        }
        for (SessionMember m : services.all()) {
            m.sessionClosed();
        }
        revocation.revoke();
        lateCreates.close();
        events.end(); // before the lease timer stops: a batch it holds would be dropped
        executors.shutdown();
        events.tell(l -> l.closed(front));
        callbacks.deliver(() -> done.complete(null));
    }
}

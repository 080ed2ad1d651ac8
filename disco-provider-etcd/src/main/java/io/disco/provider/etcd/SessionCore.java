package io.disco.provider.etcd;

import io.disco.core.ClaimMetadata;
import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import io.disco.core.internal.Callbacks;
import io.disco.core.internal.SessionEvents;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session as its services see it: the one object a service, a claim or a watch depends on. It
 * wires the session's parts together and knows nothing of what the services are: its
 * {@link LeaseKeeper} (grant, renewal, validity, loss), its {@link RequestPipeline}, its
 * {@link SessionExecutors threads} and the {@link Callbacks callback executor}, its
 * {@link SessionEvents listener events}, its {@link ServiceRegistry services}, its
 * {@link SessionWatches watches} and its {@link LateCreates janitor}. It runs the two endings of a
 * session, loss and close, across them. The public {@code EtcdSession} is the front over it.
 */
final class SessionCore implements LeaseKeeper.Observer {

    private static final Logger LOG = LoggerFactory.getLogger(SessionCore.class);

    /** The session as its listeners see it. */
    private final DiscoSession front;

    private final Client client;
    private final long leaseId;
    private final long ttlSeconds;
    private final Duration requestTimeout;
    /** What the session is called in messages. */
    private final String name;

    private final SessionExecutors executors;
    private final Callbacks callbacks;
    private final SessionEvents events;
    private final RequestPipeline requests;
    private final LeaseKeeper lease;
    private final ServiceRegistry services;
    private final SessionWatches watches;
    private final GuardedDelete deletes;
    private final LateCreates lateCreates;
    private final HeldKeyDeletions heldKeyDeletions = new HeldKeyDeletions();
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    /** This process and client, looked up once when the session opens: claims (made under a service's lock) look nothing up. */
    private final ClaimMetadata claimant;
    /** The client's connection: whether the application closed the client under this session. */
    private final EtcdEndpoints endpoints;
    /** Told when the application closes the client: the lease can no longer be renewed. */
    private final Runnable onClientClosed = this::clientClosed;

    SessionCore(DiscoSession front, Client client, LeaseKeeper.Granted granted, EtcdOptions options) {
        this.front = front;
        this.client = client;
        this.leaseId = granted.id();
        this.ttlSeconds = granted.ttlSeconds();
        this.requestTimeout = options.requestTimeout();
        this.claimant = ClaimMetadata.ofCurrentThread(options.clientId());
        this.name = "EtcdSession{lease=" + LeaseKeeper.hex(leaseId) + ", ttl=" + ttlSeconds + "s}";
        long failoverNanos = options.failoverAfter().toNanos();
        this.executors = new SessionExecutors(LeaseKeeper.hex(leaseId), name);
        this.callbacks = new Callbacks(options.callbackExecutor().orElse(null));
        this.events = new SessionEvents(options.listeners(), executors.leaseTimer, callbacks);
        this.requests = new RequestPipeline(executors, requestTimeout, failoverNanos, this::finishedCause, name);
        this.lease = new LeaseKeeper(client, granted, options, executors, requests, this, name);
        this.services = new ServiceRegistry(name);
        this.watches = new SessionWatches(client, executors, failoverNanos, name);
        this.deletes = new GuardedDelete(client, requests, lease);
        this.lateCreates = new LateCreates(client, requests, deletes, watches, services, executors);
        this.endpoints = EtcdEndpoints.of(client);
    }

    /**
     * Makes sure the lease is valid for at least half its TTL before the session is handed out (renewing
     * it first if the grant was answered late: {@link LeaseKeeper#renewBeforeHandOut}), then starts
     * keeping it alive. If it cannot be made so, the session ends unseen: its threads stop and its lease
     * (which has no keys) is revoked.
     *
     * @throws io.disco.fencing.DiscoException if the lease cannot be handed out with half its TTL
     */
    void start() {
        try {
            lease.renewBeforeHandOut();
        } catch (RuntimeException | Error e) {
            lease.close();
            lease.revokeInBackground();
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

    // ---------------------------------------------------------------- what the session is

    DiscoSession front() {
        return front;
    }

    Client client() {
        return client;
    }

    long leaseId() {
        return leaseId;
    }

    /** The lease id as etcd's Go recipes write it in keys: {@code <prefix>/<lease id in hex>}. */
    String leaseHex() {
        return LeaseKeeper.hex(leaseId);
    }

    /** Who makes a claim now, on the calling thread: the metadata written into the claim's key. */
    ClaimMetadata claimMetadata() {
        return claimant.now();
    }

    long ttlSeconds() {
        return ttlSeconds;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    @Override
    public String toString() {
        return name;
    }

    // ---------------------------------------------------------------- the lease

    LeaseState state() {
        return lease.state();
    }

    Duration remainingValidity() {
        return lease.remainingValidity();
    }

    /** The moment, on the local monotonic clock, at which the session considers its lease expired. */
    long validUntilNanos() {
        return lease.validUntilNanos();
    }

    /** @return the reason the lease was lost, or null while alive or after a plain close */
    DiscoException lossCause() {
        if (endpoints.closed() && lease.state() == LeaseState.ALIVE) {
            clientClosed(); // asked before the channel's own notice arrived
        }
        return lease.lossCause();
    }

    /** @return the loss or closure that finished this session, or null while it is usable */
    DiscoException finishedCause() {
        return lease.finishedCause();
    }

    /** Whether the lease was lost (not merely the session closed). */
    boolean isLost() {
        return lease.state() == LeaseState.LOST;
    }

    /** Renews right now, to learn quickly whether the lease still exists. */
    void probeLease() {
        lease.probe();
    }

    /** See {@link LeaseKeeper#validForGrant}. */
    CompletableFuture<Void> validForGrant() {
        return lease.validForGrant();
    }

    void orphan() {
        lease.orphan();
    }

    /** Completes, once, when the lease is lost or the session closed; on the callback executor. */
    CompletableFuture<Void> done() {
        return done;
    }

    // ---------------------------------------------------------------- services

    /**
     * Registers a service (see {@link ServiceRegistry#register}).
     *
     * @throws IllegalStateException if the session is closed or lost, or the names nest
     */
    void register(SessionMember member) {
        lease.whileUsable(() -> services.register(member));
    }

    void unregister(SessionMember member) {
        services.unregister(member);
    }

    /**
     * Registers one more semaphore holder on {@code prefix} (see {@link ServiceRegistry#joinHolders}).
     *
     * @throws IllegalStateException if the session is closed or lost, or the name is another kind's or nests
     */
    EtcdSemaphoreService joinSemaphoreHolders(
            String prefix, java.util.function.IntFunction<EtcdSemaphoreService> make) {
        EtcdSemaphoreService[] made = new EtcdSemaphoreService[1];
        lease.whileUsable(() -> made[0] = services.joinHolders(prefix, make));
        return made[0];
    }

    void leaveSemaphoreHolders(EtcdSemaphoreService service) {
        services.leaveHolders(service);
    }

    /** The service whose range holds {@code key}, or null. */
    SessionMember memberOwning(ByteSequence key) {
        return services.owning(key);
    }

    /**
     * Logs that a held key was deleted, not by this session: by somebody else (see {@link HeldKeyDeletions}),
     * or with the lease, which etcd deletes with all its keys when it expires or is revoked. The lease is
     * asked first (one renewal, sent now): while it lives, the key was deleted by somebody else, at WARN;
     * once it is lost, its loss is what is logged (at WARN, as expired or revoked), and the key at DEBUG.
     * Any thread.
     */
    void warnHeldKeyDeleted(String message) {
        lease.confirm()
                .thenAccept(alive -> runOnSession(() -> {
                    if (alive) {
                        heldKeyDeletions.warn(message
                                + ", not by this owner: somebody deleted it (etcdctl del, disco break?) while its"
                                + " lease lives");
                    } else {
                        LOG.debug(
                                "{}, with its lease ({})",
                                message,
                                lease.finishedCause() == null
                                        ? "closed"
                                        : lease.finishedCause().getMessage());
                    }
                }));
    }

    /** See {@link GuardedDelete#untilAnswered}. */
    CompletableFuture<Void> deleteOwnKey(ByteSequence key, long createRevision, Op... alsoDelete) {
        return deletes.untilAnswered(key, createRevision, alsoDelete);
    }

    /**
     * A grant's own token for a message, {@code " (token 1234)"}, or nothing for a grant without one: a key's
     * create revision is the token of a lock or a writer only (a reader's is its phase's, a permit's its slot's).
     * Only the grant records' own accessors are called: this is called under a service's monitor.
     */
    static String tokenText(Object grant) {
        io.disco.fencing.FencingToken token;
        if (grant instanceof io.disco.lock.Grant g) {
            token = g.token();
        } else if (grant instanceof io.disco.rwlock.RWGrant g) {
            token = g.token();
        } else if (grant instanceof io.disco.semaphore.Permit p) {
            token = p.token();
        } else if (grant instanceof io.disco.election.Leadership l) {
            token = l.token();
        } else {
            return "";
        }
        return " (token " + token.value() + ")";
    }

    /** The janitor for create Txns whose outcome is unknown; session thread only. */
    LateCreates lateCreates() {
        return lateCreates;
    }

    // ---------------------------------------------------------------- requests and watches

    /** See {@link RequestPipeline#rpc(String, Supplier)}. */
    <T> CompletableFuture<T> rpc(String what, Supplier<CompletableFuture<T>> call) {
        return requests.rpc(what, call);
    }

    /** See {@link RequestPipeline#rpcOnce}. */
    <T> CompletableFuture<T> rpcOnce(String what, Supplier<CompletableFuture<T>> call) {
        return requests.rpcOnce(what, call);
    }

    /** See {@link RequestPipeline#untilAnswered}. */
    <T> CompletableFuture<T> untilAnswered(String what, Supplier<CompletableFuture<T>> call) {
        return requests.untilAnswered(what, call);
    }

    /** See {@link SessionWatches#watch}. */
    Watch.Watcher watch(
            ByteSequence key,
            WatchOption option,
            SessionWatches.Silence silence,
            Consumer<WatchResponse> onEvents,
            Runnable onBroken) {
        return watches.watch(key, option, silence, onEvents, onBroken);
    }

    long probeTimeoutNanos() {
        return watches.probeTimeoutNanos();
    }

    // ---------------------------------------------------------------- threads and events

    /** Runs {@code task} on the session thread; dropped silently once the session is shut down. */
    void runOnSession(Runnable task) {
        executors.runOnSession(task);
    }

    /** See {@link SessionContext#runHere}. */
    void runHere(Runnable task) {
        executors.context.runHere(task);
    }

    /** See {@link SessionContext#await}. */
    <T> T await(CompletableFuture<T> f, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        return executors.context.await(f, timeoutNanos);
    }

    /** Runs {@code task} on the session thread after {@code delay}; null once the session is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return executors.schedule(task, delay, unit);
    }

    /** See {@link Callbacks#deliver}. */
    void deliver(Runnable task) {
        callbacks.deliver(task);
    }

    /** @return where user-facing futures complete: the default for {@code *Async} stages of those futures */
    Executor callbackExecutor() {
        return callbacks.executor();
    }

    /** @return whether anyone listens: callers skip building an event's arguments otherwise */
    boolean listened() {
        return events.listened();
    }

    /** See {@link SessionEvents#tell}. */
    void tell(Consumer<SessionListener> event) {
        events.tell(event);
    }

    // ---------------------------------------------------------------- the lease's events

    @Override
    public void renewed(Duration remaining) {
        if (events.listened()) {
            events.tell(l -> l.renewed(front, remaining));
        }
    }

    @Override
    public void renewalFailing(Duration failingFor, Duration remaining, Throwable cause) {
        events.tell(l -> l.renewalFailing(front, failingFor, remaining, cause));
    }

    /** Tells every service and completes {@link #done()}; on the lease thread, outside the lease's lock. */
    @Override
    public void lost(DiscoException cause) {
        endpoints.forget(onClientClosed);
        LOG.warn("{}; lost with it: {}", cause.getMessage(), services.describe(), cause.getCause());
        lateCreates.close();
        for (SessionMember m : services.all()) {
            m.sessionLost(cause);
        }
        events.tell(l -> l.lost(front, cause)); // after the services' grantLost and acquisitionFailed
        callbacks.deliver(() -> done.complete(null));
    }

    @Override
    public String affected() {
        return services.describe();
    }

    // ---------------------------------------------------------------- close

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
        lease.revoke();
        lateCreates.close();
        executors.shutdown();
        events.tell(l -> l.closed(front));
        callbacks.deliver(() -> done.complete(null));
    }
}

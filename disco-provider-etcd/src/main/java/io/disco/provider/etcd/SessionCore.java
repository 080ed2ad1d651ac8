package io.disco.provider.etcd;

import io.disco.core.ClaimMetadata;
import io.disco.core.DiscoSession;
import io.disco.core.internal.Callbacks;
import io.disco.core.internal.SessionEvents;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * A session as its services see it: the one object a service, a claim or a watch depends on. It
 * wires the session's parts together and knows nothing of what the services are: its
 * {@link LeaseKeeper} (renewal, validity, loss), its {@link RequestPipeline}, its
 * {@link SessionExecutors threads} and the {@link Callbacks callback executor}, its
 * {@link SessionEvents listener events}, its {@link ServiceRegistry services} (which register
 * themselves here as {@link SessionMember}s), its {@link SessionWatches watches}, its
 * {@link GuardedDelete deletes} and its {@link LateCreates janitor}; its hand-out and its two endings,
 * loss and close, are its {@link SessionLifetime}. Its duties: say what the session is (lease, TTL,
 * claimant), answer for the lease, register services, and lend the parts' operations to the services.
 * The public {@code EtcdSession} is the front over it.
 */
final class SessionCore implements LeaseKeeper.Observer {

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
    private final SessionLifetime lifetime;
    private final HeldKeyDeletions heldKeyDeletions;

    /** This process and client, looked up once when the session opens: claims (made under a service's lock) look nothing up. */
    private final ClaimMetadata claimant;

    SessionCore(DiscoSession front, Client client, GrantedLease granted, EtcdOptions options) {
        this.front = front;
        this.client = client;
        this.leaseId = granted.id();
        this.ttlSeconds = granted.ttlSeconds();
        this.requestTimeout = options.requestTimeout();
        this.claimant = ClaimMetadata.ofCurrentThread(options.clientId());
        this.name = "EtcdSession{lease=" + GrantedLease.hex(leaseId) + ", ttl=" + ttlSeconds + "s}";
        long failoverNanos = options.failoverAfter().toNanos();
        this.executors = new SessionExecutors(GrantedLease.hex(leaseId), name);
        this.callbacks = new Callbacks(options.callbackExecutor().orElse(null));
        this.events = new SessionEvents(options.listeners(), executors.leaseTimer, callbacks);
        this.requests = new RequestPipeline(executors, requestTimeout, failoverNanos, this::finishedCause, name);
        KeepAlive keepAlive = new KeepAlive(client, leaseId, executors.leaseTimer);
        this.lease = new LeaseKeeper(client, granted, keepAlive, options, executors, requests, this, name);
        this.services = new ServiceRegistry(name);
        this.watches = new SessionWatches(client, executors, failoverNanos, name);
        this.deletes = new GuardedDelete(client, requests, lease);
        this.heldKeyDeletions = new HeldKeyDeletions(lease, executors);
        this.lateCreates = new LateCreates(client, requests, deletes, watches, services, executors);
        this.lifetime = new SessionLifetime(
                front,
                lease,
                new HandOutRenewal(lease, keepAlive, requests, executors.leaseTimer, requestTimeout),
                new LeaseRevocation(client, granted, requestTimeout),
                services,
                lateCreates,
                executors,
                events,
                callbacks,
                EtcdEndpoints.of(client),
                requestTimeout);
    }

    /** See {@link SessionLifetime#start}. */
    void start() {
        lifetime.start();
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

    /** The lease id as etcd's Go recipes write it in keys: {@code <name>/<lease id in hex>}. */
    String leaseHex() {
        return GrantedLease.hex(leaseId);
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
        return lifetime.lossCause();
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
        return lifetime.done();
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
     * Registers one more holder on {@code name} (see {@link ServiceRegistry#joinHolders}).
     *
     * @throws IllegalStateException if the session is closed or lost, or the name is another kind's or nests
     */
    <H extends HolderGroup.Holder> H joinHolders(String name, String kind, IntFunction<H> make) {
        List<H> made = new ArrayList<>(1);
        lease.whileUsable(() -> made.add(services.joinHolders(name, kind, make)));
        return made.get(0);
    }

    void leaveHolders(HolderGroup.Holder holder) {
        services.leaveHolders(holder);
    }

    /** See {@link HeldKeyDeletions#report}; any thread. */
    void warnHeldKeyDeleted(String message) {
        heldKeyDeletions.report(message);
    }

    /** See {@link GuardedDelete#untilAnswered}. */
    CompletableFuture<Void> deleteOwnKey(ByteSequence key, long createRevision, Op... alsoDelete) {
        return deletes.untilAnswered(key, createRevision, alsoDelete);
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

    /** @return the session's listeners, as its services tell them of their grants */
    SessionEvents events() {
        return events;
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

    /** See {@link SessionLifetime#lost}; on the lease thread, outside the lease's lock. */
    @Override
    public void lost(DiscoException cause) {
        lifetime.lost(cause);
    }

    @Override
    public String affected() {
        return services.describe();
    }

    // ---------------------------------------------------------------- close

    /** See {@link SessionLifetime#close}. */
    void close() {
        lifetime.close();
    }
}

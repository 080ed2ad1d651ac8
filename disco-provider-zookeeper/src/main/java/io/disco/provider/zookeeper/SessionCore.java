package io.disco.provider.zookeeper;

import io.disco.core.ClaimMetadata;
import io.disco.core.DiscoSession;
import io.disco.core.internal.SessionEvents;
import io.disco.core.internal.session.ServiceRegistry;
import io.disco.core.internal.session.SessionExecutors;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * A session as its services see it: the one object a service, an acquisition or a release depends on, and all
 * they know of the session. It wires the session's parts together and knows nothing of what the services are:
 * its {@link SessionStatus} (state, loss, acquisitions parked while SUSPENDED), its {@link SessionLiveness} (pings,
 * deadline, Curator's connection events), its {@link SessionExecutors} (the session's thread, the workers, the
 * callback executor) and its {@link ServiceRegistry}. It runs the two endings of a session, loss and close,
 * across them: every service is told ({@link SessionMember}), then {@link #done()} completes and the threads
 * stop. The public {@code ZooKeeperSession} is the front over it.
 */
final class SessionCore implements SessionLiveness.Renewals {

    private final CuratorFramework client;
    private final Duration requestTimeout;
    private final String connectString;
    private final long sessionId;
    private final SessionExecutors executors;
    private final SessionStatus status = new SessionStatus();
    private final ServiceRegistry services = new ServiceRegistry();
    private final SessionLiveness liveness;
    /** The session as its listeners see it. */
    private final DiscoSession front;

    private final SessionEvents events;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** Who claims through this session: host and pid, looked up once; the thread and time are each claim's. */
    private final ClaimMetadata claimant;

    /** Starts the session's threads and its liveness checks on a session ready to be handed out. */
    SessionCore(DiscoSession front, CuratorFramework client, ZooKeeperOptions options, SessionHandOut.Opened opened) {
        this.front = front;
        this.claimant = ClaimMetadata.ofCurrentThread(options.clientId());
        this.client = client;
        this.requestTimeout = options.requestTimeout();
        this.connectString = client.getZookeeperClient().getCurrentConnectionString();
        this.sessionId = opened.sessionId();
        this.executors = new SessionExecutors("disco-zk", Long.toHexString(sessionId), options.callbackExecutor());
        this.events = new SessionEvents(options.listeners(), executors.sessionThread(), executors.callbacks());
        this.liveness = new SessionLiveness(client, connectString, opened, status, executors, this::lose, this);
        liveness.start();
    }

    // ------------------------------------------------------------------ what the session is

    CuratorFramework client() {
        return client;
    }

    /** @return the connect string, for messages */
    String connectString() {
        return connectString;
    }

    /** @return the ZooKeeper session id: the ephemeral owner of this session's nodes */
    long sessionId() {
        return sessionId;
    }

    /** @return how long a call without a timeout of its own waits for ZooKeeper */
    Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return the metadata of a claim made now by the calling thread, as the data of its node */
    byte[] claimData() {
        return claimant.now().toJson().getBytes(StandardCharsets.UTF_8);
    }

    /** @return the session as its listeners see it */
    DiscoSession front() {
        return front;
    }

    /** @return the session's listeners, as its services tell them of their grants */
    SessionEvents events() {
        return events;
    }

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

    /** @return a failure of ZooKeeper while {@code doing} something, naming where ZooKeeper is */
    DiscoException failure(String doing, Exception e) {
        return new DiscoException("ZooKeeper at " + connectString + " failed while " + doing + ": " + e, e);
    }

    @Override
    public String toString() {
        return "ZooKeeperSession(0x" + Long.toHexString(sessionId) + " at " + connectString + ", " + state() + ")";
    }

    // ------------------------------------------------------------------ where it stands

    SessionState state() {
        return status.state();
    }

    /** @return the loss, if the session is lost; throws nothing */
    DiscoException lossOrNull() {
        return status.lossOrNull();
    }

    /** See {@link SessionStatus#parkIfSuspended}. */
    boolean parkIfSuspended(Semaphore wake) {
        return status.parkIfSuspended(wake);
    }

    Duration ttl() {
        return liveness.ttl();
    }

    /** See {@link SessionLiveness#remainingValidity}. */
    Duration remainingValidity() {
        return liveness.remainingValidity();
    }

    /** @return why the session was lost (once the client closed under it is noticed), or null */
    DiscoException err() {
        liveness.checkClientOpen();
        return status.lossOrNull();
    }

    /** Completes, once, when the session is lost or closed, on the callback executor. */
    CompletableFuture<Void> done() {
        return done;
    }

    // ------------------------------------------------------------------ services

    /**
     * Makes the service of {@code name} and registers it (see {@link ServiceRegistry#add}).
     *
     * @throws IllegalStateException if the session is closed or lost (also because its client is closed), or has
     *     a service on {@code name}
     */
    <T extends SessionMember> T register(String name, boolean shared, Supplier<T> make) {
        liveness.checkClientOpen();
        return status.whileUsable(this::toString, () -> services.add(name, shared, make));
    }

    /** @throws IllegalStateException if this session has a service on {@code name} that cannot share it (see {@link ServiceRegistry#checkFree}) */
    void checkFree(String name, boolean shared) {
        services.checkFree(name, shared);
    }

    void unregister(SessionMember member) {
        services.remove(member);
    }

    /** A background delete that Curator keeps retrying until it succeeds or the session ends. */
    void deleteInBackground(String node) {
        try {
            client.delete().guaranteed().inBackground().forPath(node);
        } catch (Exception e) {
            // the client is closed: the session, and the ephemeral node with it, ends anyway
        }
    }

    // ------------------------------------------------------------------ threads

    /** See {@link SessionExecutors#onSessionThread}. */
    void onSessionThread(Runnable task) {
        executors.onSessionThread(task);
    }

    /**
     * See {@link SessionExecutors#schedule}.
     *
     * @throws RejectedExecutionException once the session ended
     */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return executors.schedule(task, delay, unit);
    }

    /**
     * See {@link SessionExecutors#work}.
     *
     * @throws RejectedExecutionException once the session ended
     */
    void work(Runnable task) {
        executors.work(task);
    }

    /** See {@link SessionExecutors#inBackground}. */
    CompletableFuture<Void> inBackground(Runnable task) {
        return executors.inBackground(task);
    }

    /** See {@link SessionExecutors#supplyInBackground}. */
    <T> CompletableFuture<T> supplyInBackground(Supplier<T> task) {
        return executors.supplyInBackground(task);
    }

    /** Runs {@code task} on the callback executor. */
    void deliver(Runnable task) {
        executors.deliver(task);
    }

    /** @return where user futures complete */
    Executor callbackExecutor() {
        return executors.callbackExecutor();
    }

    // ------------------------------------------------------------------ the endings

    /** Declares the session lost, unless it ended already: every service is told, then {@link #done()} completes. */
    void lose(String reason, Throwable cause) {
        DiscoException loss = status.lose(reason, cause);
        if (loss == null) {
            return;
        }
        for (SessionMember m : services.drain()) {
            m.sessionLost(reason, cause);
        }
        events.tell(l -> l.lost(front, loss)); // after the services' grantLost and acquisitionFailed
        finish();
    }

    /** Closes every service of this session and stops watching it; the client stays open. Idempotent. */
    void close() {
        if (!status.close()) {
            return;
        }
        for (SessionMember m : services.all()) {
            m.sessionClosed();
        }
        events.tell(l -> l.closed(front));
        finish();
    }

    private void finish() {
        events.end(); // told at once from now on: the session's thread, the batches' timer, stops below
        liveness.stop();
        executors.deliver(() -> done.complete(null));
        executors.shutdown();
    }
}

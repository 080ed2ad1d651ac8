package io.disco.provider.redis;

import io.disco.core.ClaimMetadata;
import io.disco.core.DiscoSession;
import io.disco.core.internal.SessionEvents;
import io.disco.core.internal.session.ServiceRegistry;
import io.disco.core.internal.session.SessionExecutors;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A session as its services see it: the one object a service, an acquisition or a release depends on, and all they
 * know of the session. It wires the session's parts together and knows nothing of what the services are: its
 * connections ({@link Link}), its {@link SessionStatus}, its {@link Liveness} (renewal rounds, deadline, the claims
 * it renews), its {@link Wakeups} (the pub/sub the waits listen to), its {@link TokenLineage}, its
 * {@link SessionExecutors} and its {@link ServiceRegistry}. It runs the two endings of a session, loss and close:
 * every service is told ({@link SessionMember}), then {@code done()} completes and the threads stop; a close then
 * waits for the acquisitions' workers, deletes whatever claim of this owner is left on the names it used, and closes
 * the connections (a lost session keeps them, for its clean-up and the listing, until it is closed). The public
 * {@code RedisSession} is the front over it.
 */
final class SessionCore implements Liveness.Renewals {

    private final Deployment deployment;
    private final Link link;
    private final RedisOptions options;
    private final long ownerId;
    private final String ownerText;
    private final int acks;
    private final SessionExecutors executors;
    private final SessionStatus status = new SessionStatus();
    private final ServiceRegistry services = new ServiceRegistry();
    private final Liveness liveness;
    private final Wakeups wakeups;
    private final TokenLineage lineage;
    private final DiscoSession front;
    private final SessionEvents events;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final ClaimMetadata claimant;
    /** Deletes sent in the background: the connections close once they are answered. */
    private final Set<CompletableFuture<?>> background = ConcurrentHashMap.newKeySet();
    /** Every name a service of this session was made on: swept of this owner's claims when the session closes. */
    private final Set<String> names = ConcurrentHashMap.newKeySet();
    /** The acquisitions whose workers may still write a claim: a close waits for them before its sweep. */
    private final Set<CompletableFuture<Void>> workers = ConcurrentHashMap.newKeySet();

    private volatile boolean linkClosed;

    SessionCore(
            DiscoSession front,
            Deployment deployment,
            Link link,
            RedisOptions options,
            long ownerId,
            long confirmedAt,
            TokenLineage lineage) {
        this.front = front;
        this.deployment = deployment;
        this.link = link;
        this.options = options;
        this.ownerId = ownerId;
        this.ownerText = Long.toString(ownerId);
        this.acks = options.replicaAcks().orElse(deployment.defaultAcks());
        this.lineage = lineage;
        this.claimant = ClaimMetadata.ofCurrentThread(options.clientId());
        this.executors = new SessionExecutors("disco-redis", Long.toHexString(ownerId), options.callbackExecutor());
        this.events = new SessionEvents(options.listeners(), executors.sessionThread(), executors.callbacks());
        this.liveness = new Liveness(
                link.commands(),
                deployment.describe(),
                options.ttl(),
                confirmedAt,
                executors,
                status,
                this::lose,
                this);
        this.wakeups = new Wakeups(
                link.pubsub(), this::goneMessage, (task, ms) -> executors.schedule(task, ms, TimeUnit.MILLISECONDS));
    }

    /** Starts the renewals and the subscription to the gone channel, waiting for it at most {@code timeout}. */
    void start(Duration timeout) {
        Calls.get(wakeups.start(), timeout, where(), "subscribing to " + RedisKeys.GONE_CHANNEL);
        liveness.start();
    }

    // ------------------------------------------------------------------ what the session is

    Link link() {
        return link;
    }

    boolean linkClosed() {
        return linkClosed;
    }

    Liveness liveness() {
        return liveness;
    }

    Wakeups wakeups() {
        return wakeups;
    }

    TokenLineage lineage() {
        return lineage;
    }

    /** @return the replica acknowledgements a grant needs */
    int acks() {
        return acks;
    }

    /** @return whether grants run on a grant connection of their own (to wait for acks, or to reach a Cluster node) */
    boolean grantsOnOwnConnection() {
        return acks > 0 || deployment.kind() == Deployment.Kind.CLUSTER;
    }

    Duration grantAckTimeout() {
        return options.grantAckTimeout();
    }

    Deployment deployment() {
        return deployment;
    }

    /** @return the owner's id */
    long ownerId() {
        return ownerId;
    }

    /** @return the owner's id as its claims record it (decimal) */
    String ownerText() {
        return ownerText;
    }

    /** @return where Redis is, for messages */
    String where() {
        return deployment.describe();
    }

    Duration requestTimeout() {
        return options.requestTimeout();
    }

    Duration ttl() {
        return liveness.ttl();
    }

    /** @return the metadata of a claim made now by the calling thread */
    String claimData() {
        return claimant.now().toJson();
    }

    DiscoSession front() {
        return front;
    }

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

    @Override
    public String toString() {
        return "RedisSession(" + Long.toHexString(ownerId) + " at " + where() + ", " + status.state() + ")";
    }

    // ------------------------------------------------------------------ where it stands

    SessionStatus.State state() {
        return status.state();
    }

    DiscoException lossOrNull() {
        return status.lossOrNull();
    }

    Duration remainingValidity() {
        return liveness.remainingValidity();
    }

    CompletableFuture<Void> done() {
        return done;
    }

    // ------------------------------------------------------------------ services

    <T extends SessionMember> T register(String name, boolean shared, Supplier<T> make) {
        return status.whileUsable(this::toString, () -> {
            T member = services.add(name, shared, make);
            names.add(name);
            return member;
        });
    }

    /**
     * Records that this session writes claims on {@code name} outside a service (a double barrier participant), so
     * that its close sweeps them.
     *
     * @throws IllegalStateException if the session is closed or lost
     */
    void useName(String name) {
        status.whileUsable(this::toString, () -> names.add(name));
    }

    void checkFree(String name, boolean shared) {
        services.checkFree(name, shared);
    }

    void unregister(SessionMember member) {
        services.remove(member);
    }

    /**
     * Deletes claim {@code id} of {@code name} in the background (a withdrawal, whatever its state), unless the
     * session is frozen (a stopped process sends nothing): best effort; unrenewed, the claim expires anyway.
     */
    void deleteInBackground(String name, String id) {
        liveness.unregister(RedisKeys.claim(name, id));
        if (liveness.frozen() || linkClosed) {
            return;
        }
        try {
            CompletableFuture<?> f = Scripts.RELEASE
                    .run(link.commands(), name, id, ownerText, "*")
                    .orTimeout(options.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
            background.add(f);
            f.whenComplete((a, e) -> background.remove(f));
        } catch (RuntimeException e) {
            // the connection is closing: the claim expires
        }
    }

    // ------------------------------------------------------------------ threads

    void onSessionThread(Runnable task) {
        executors.onSessionThread(task);
    }

    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return executors.schedule(task, delay, unit);
    }

    void work(Runnable task) {
        executors.work(task);
    }

    /** A worker runs until {@code withdrawn} completes: a close waits for it (bounded) before it sweeps. */
    void track(CompletableFuture<Void> withdrawn) {
        workers.add(withdrawn);
        withdrawn.whenComplete((v, e) -> workers.remove(withdrawn));
    }

    CompletableFuture<Void> inBackground(Runnable task) {
        return executors.inBackground(task);
    }

    <T> CompletableFuture<T> supplyInBackground(Supplier<T> task) {
        return executors.supplyInBackground(task);
    }

    void deliver(Runnable task) {
        executors.deliver(task);
    }

    Executor callbackExecutor() {
        return executors.callbackExecutor();
    }

    // ------------------------------------------------------------------ the endings

    /** A message on the gone channel: one of this session's claims deleted behind its back, or the owner ended. */
    private void goneMessage(String message) {
        String[] f = message.split(" ", 3);
        if (f.length < 2 || !ownerText.equals(f[1])) {
            return;
        }
        if ("o".equals(f[0])) {
            onSessionThread(() -> lose("the owner " + Long.toHexString(ownerId) + " was ended from outside", null));
        } else if ("c".equals(f[0]) && f.length == 3) {
            String key = f[2];
            onSessionThread(() -> {
                Liveness.Gone gone = liveness.registered(key);
                if (gone != null) {
                    liveness.unregister(key);
                    gone.gone("its claim " + key + " was deleted by somebody else");
                }
            });
        }
    }

    /** Declares the session lost, unless it ended already: every service is told, then {@code done()} completes. */
    void lose(String reason, Throwable cause) {
        DiscoException loss = status.lose(reason, cause);
        if (loss == null) {
            return;
        }
        for (SessionMember m : services.drain()) {
            m.sessionLost(reason, cause);
        }
        events.tell(l -> l.lost(front, loss));
        finish();
    }

    /** Closes every service of this session (releasing what they hold); then its connections. Idempotent. */
    void close() {
        if (!status.close()) {
            return;
        }
        for (SessionMember m : services.all()) {
            m.sessionClosed();
        }
        events.tell(l -> l.closed(front));
        finish();
        awaitWorkers();
        sweep();
        awaitBackground();
        closeLink();
    }

    /**
     * Deletes whatever claim of this owner is still on a name it used (a withdrawal or release that a close overtook),
     * one script per name, at most the request timeout in all: a closed session leaves nothing behind; what it cannot
     * delete expires, unrenewed. Not while frozen: a stopped process sends nothing.
     */
    private void awaitWorkers() {
        try {
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new))
                    .get(options.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // a worker still waits for Redis: the sweep runs anyway; what it creates later expires, unrenewed
        }
    }

    private void awaitBackground() {
        try {
            CompletableFuture.allOf(background.toArray(CompletableFuture[]::new))
                    .get(options.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // unanswered: unrenewed, the claims expire
        }
    }

    private void sweep() {
        if (liveness.frozen() || linkClosed) {
            return;
        }
        try {
            CompletableFuture<?>[] drops = names.stream()
                    .map(n -> Scripts.DROP.run(link.commands(), n, ownerText))
                    .toArray(CompletableFuture[]::new);
            CompletableFuture.allOf(drops).get(options.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // unanswered: unrenewed, the claims expire
        }
    }

    private void finish() {
        events.end();
        liveness.stop();
        executors.deliver(() -> done.complete(null));
        executors.shutdown();
    }

    /**
     * Closes the connections (after a loss, only once the session is closed too: the owner closes it), waiting for
     * them outside the monitor.
     */
    private void closeLink() {
        synchronized (this) {
            if (linkClosed) {
                return;
            }
            linkClosed = true;
        }
        lineage.close();
        try {
            link.close();
        } catch (RejectedExecutionException | IllegalStateException e) {
            // the Lettuce client is shut down already
        }
    }

    /** @return the services, for tests */
    List<SessionMember> services() {
        return services.all();
    }
}

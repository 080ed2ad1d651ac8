package io.disco.provider.redis;

import io.disco.client.Barriers;
import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.DiscoSession;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * One owner on Redis: the claims of one session, on which locks, read/write locks, semaphores and elections are
 * created, at most one per name (semaphores excepted: one session may hold several permits of one semaphore, a
 * service each). It is the client's owner on Redis (a {@link DiscoBackend.Owner}); the client of
 * {@link RedisProvider} opens one at a time, a {@link RedisDiscoBackend} one per {@code open()}.
 *
 * <h2>Lease</h2>
 * A claim is live exactly while its key exists ({@link RedisKeys}); every claim key of the session, held or waiting,
 * is created with the session's TTL {@code T} ({@link RedisOptions#ttl()}) and renewed together every {@code T/3}
 * ({@code PEXPIRE <key> T XX}, pipelined, with a {@code PING}). The session is one logical lease: one TTL, one local
 * validity and one loss. Its validity ends {@code T - T/10} after the local monotonic instant at which the last round
 * whose every request was answered was <em>sent</em>; the server counts {@code T} from when it received the round,
 * later, so the session declares itself lost, and {@link #done()} and every service's {@code done()} complete, before
 * the server can expire any of its claims (the server expires keys on its wall clock: a clock that jumps forward on
 * the Redis host shortens leases, see docs/redis.md). A renewal that finds one claim's key gone (deleted behind the
 * owner's back, or expired) is the loss of that claim's grant, not of the session; so is a deletion announced on
 * {@link RedisKeys#GONE_CHANNEL} ({@code disco break}), heard at once. An owner ended from outside (announced there
 * too) is lost as a whole.
 *
 * <h2>Threads</h2>
 * Lettuce's event loop only hands answers and messages over; renewals, the deadline and releases' retries run on the
 * session's thread ({@code disco-redis-session-<id>}), waiting acquisitions on {@code disco-redis-worker-<id>-N}, and
 * futures handed to the user complete on the callback executor ({@link RedisOptions.Builder#callbackExecutor}). No
 * user code runs on Lettuce's threads or the session's.
 *
 * <h2>Who closes what</h2>
 * {@link #close()} closes every service of this session (releasing what they hold) and then the session's own
 * connections (a multiplexed one, a pub/sub one, and grant connections when grants wait for replicas); the Lettuce
 * client and its resources belong to the application.
 */
public final class RedisSession implements DiscoSession, DiscoBackend.Owner {

    private static final SecureRandom IDS = new SecureRandom();

    private final SessionCore core;
    private final RedisBarriers barriers;

    private RedisSession(Deployment deployment, Link link, RedisOptions options, long ownerId, long confirmedAt) {
        this.core = new SessionCore(
                this,
                deployment,
                link,
                options,
                ownerId,
                confirmedAt,
                new TokenLineage(deployment, options.requestTimeout()));
        this.barriers = new RedisBarriers(core);
    }

    /**
     * Opens a session on a standalone server or a Sentinel-managed primary.
     *
     * @param client the application's Lettuce client; never closed here
     * @param uri the server, or the sentinels and the master's name
     * @param options the options
     * @return the open session
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses the server's settings (the message names them)
     * @throws DiscoException if Redis could not be reached in time, or is older than 7.0
     */
    public static RedisSession open(RedisClient client, RedisURI uri, RedisOptions options) {
        return open(Deployment.of(client, uri), options);
    }

    /**
     * Opens a session on a Redis Cluster.
     *
     * @param client the application's Lettuce cluster client; never closed here
     * @param options the options
     * @return the open session
     * @throws NullPointerException if an argument is null
     * @throws UnsafeTokenException if the start check refuses a primary's settings (the message names them)
     * @throws DiscoException if Redis could not be reached in time, or is older than 7.0
     */
    public static RedisSession open(RedisClusterClient client, RedisOptions options) {
        return open(Deployment.of(client), options);
    }

    static RedisSession open(Deployment deployment, RedisOptions options) {
        Objects.requireNonNull(options, "options");
        String where = deployment.describe();
        Link link = deployment.connect(options.connectTimeout());
        try {
            for (Link.Node node : link.primaries()) {
                ServerCheck.check(node, options, where, options.connectTimeout());
            }
            long sent = System.nanoTime();
            Calls.await(link.commands().ping(), options.connectTimeout(), where, "opening a session");
            long ownerId = IDS.nextLong() & Long.MAX_VALUE;
            if (ownerId == 0) {
                ownerId = 1;
            }
            RedisSession session = new RedisSession(deployment, link, options, ownerId, sent);
            try {
                session.core.start(options.connectTimeout());
            } catch (RuntimeException e) {
                session.close();
                throw e;
            }
            return session;
        } catch (InterruptedException e) {
            link.close();
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while opening a session at " + where, e);
        } catch (TimeoutException e) {
            link.close();
            throw new DiscoException(
                    where + " did not answer within " + options.connectTimeout().toMillis()
                            + " ms while a session was opened",
                    e);
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
    }

    /**
     * Creates a lock on {@code name} on this session (see {@link LockService} for the contract): its claims are
     * {@code disco:{<name>}:c:<id>} of kind {@code x}; the first live claim in queue order holds it; its token is
     * the name's next token when the claim is admitted.
     *
     * @param name the lock's name
     * @return the lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    @Override
    public LockService newLock(String name) {
        return RedisLockService.create(core, name);
    }

    /**
     * Creates a read/write lock on {@code name} on this session (see {@link RWLockService} for the contract): a
     * reader is admitted when no live writer is ahead of it, a writer when it is first; the readers of one phase share
     * one token, and every writer's is above the readers' before it and below those after it.
     *
     * @param name the lock's name
     * @return the read/write lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    @Override
    public RWLockService newRWLock(String name) {
        return RedisRWLockService.create(core, name);
    }

    /**
     * Creates a semaphore of {@code limit} permits on {@code name} on this session (see {@link SemaphoreService}
     * for the contract): a claim is admitted among the first {@code limit} live claims and takes the lowest free slot.
     * The limit is recorded with the name's token record; another limit is refused.
     *
     * @param name the semaphore's name
     * @param limit the number of permits, at least 1
     * @return the semaphore; closing it releases its permit and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid, {@code limit < 1}, or the semaphore
     *     exists with another limit
     * @throws IllegalStateException if this session already has a service on {@code name} other than a semaphore,
     *     or is closed or lost
     * @throws DiscoException if Redis failed while the limit was checked
     */
    @Override
    public SemaphoreService newSemaphore(String name, int limit) {
        return RedisSemaphoreService.create(core, name, limit);
    }

    /**
     * Creates a candidate (and observer) of the election on {@code name} on this session (see {@link ElectionService}
     * for the contract): the first live candidate leads; its term's token is the name's next token; every term and
     * proclamation is appended to the name's log ({@link RedisKeys#log}), which observations read.
     *
     * @param name the election's name
     * @return the election; closing it resigns and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    /**
     * The barriers and double barriers on this session ({@link RedisBarriers}): a barrier is a key of no owner,
     * {@link RedisKeys#barrier}; a double barrier participant is a claim of this session, {@link RedisKeys#claim} of
     * kind {@code d}, listed in {@link RedisKeys#participants}.
     *
     * @return the barrier steps
     */
    @Override
    public Barriers barriers() {
        return barriers;
    }

    @Override
    public ElectionService newElection(String name) {
        return newElection(name, null);
    }

    /** An election that runs {@code afterClose} once it is closed (an election that owns this session). */
    ElectionService newElection(String name, Runnable afterClose) {
        return RedisElectionService.create(core, name, afterClose);
    }

    /**
     * Who holds and who waits for {@code name} as {@code primitive}: the holders first, then the waiters, in queue
     * order, read in one snapshot by a script that writes nothing ({@link RedisClaimantListing}). Works while this
     * session is lost, as long as its connections are open.
     *
     * @param primitive what the name is
     * @param name the primitive's name
     * @return the claimants, holders then waiters; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws DiscoException if Redis failed or did not answer within the request timeout
     */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return RedisClaimantListing.list(core.link().commands(), core.where(), primitive, name, core.requestTimeout());
    }

    /**
     * Who holds and who waits for {@code name} as {@code primitive}, read through an open connection without a
     * session: the same listing as {@link #claimants(Primitive, String)}, for tools (the {@code disco} tool lists
     * with it). A snapshot, for people: never take a token from here to fence with.
     *
     * @param connection an open connection (standalone, Sentinel-managed, or a Cluster's), the caller's
     * @param primitive what the name is
     * @param name the primitive's name
     * @param timeout how long to wait for Redis
     * @return the claimants, holders then waiters; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws DiscoException if Redis failed or did not answer in time
     */
    public static List<Claimant> claimants(
            io.lettuce.core.api.StatefulConnection<String, String> connection,
            Primitive primitive,
            String name,
            Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return RedisClaimantListing.list(commands(connection), "redis", primitive, name, timeout);
    }

    /**
     * Breaks claims of {@code name} behind their owners' backs, as an operator's {@code disco break} does, through
     * an open connection without a session: in one script ({@code break.lua}), guarded on every claim still existing
     * (and, with {@code holdersOnly}, holding: else nothing is deleted), deletes the claims, frees their semaphore
     * slots, wakes the claims now admitted and announces each deletion on {@link RedisKeys#GONE_CHANNEL}, where its
     * owner hears at once that it lost. The name's token record stays, so every token issued after is above every token issued before; with
     * {@code endReadPhase} the read phase's token is forgotten too, so that the next reader's is a new one above the
     * broken readers' (give it when the claims are every reader of the phase).
     *
     * @param connection an open connection (standalone, Sentinel-managed, or a Cluster's), the caller's
     * @param name the primitive's name
     * @param claimIds the claims' ids (the part after the last {@code /} of a claimant's key)
     * @param holdersOnly whether every claim must hold (have been admitted), else nothing is deleted
     * @param endReadPhase whether to forget the read phase's token as well
     * @param timeout how long to wait for Redis
     * @return the owners (their ids, in decimal) of the claims deleted, in the order given; empty when a claim was gone
     *     (or, with {@code holdersOnly}, did not hold), and nothing was deleted
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is invalid or {@code claimIds} is empty
     * @throws DiscoException if Redis failed or did not answer in time
     */
    public static List<String> breakClaims(
            io.lettuce.core.api.StatefulConnection<String, String> connection,
            String name,
            List<String> claimIds,
            boolean holdersOnly,
            boolean endReadPhase,
            Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        String checked = RedisKeys.checkName(name);
        if (claimIds.isEmpty()) {
            throw new IllegalArgumentException("no claim to break");
        }
        String[] args = new String[claimIds.size() + 1];
        args[0] = "1g" + (holdersOnly ? "h" : "") + (endReadPhase ? "p" : "");
        for (int i = 0; i < claimIds.size(); i++) {
            args[i + 1] = Objects.requireNonNull(claimIds.get(i), "claim id");
        }
        List<Object> answer = Calls.get(
                Scripts.BREAK.run(commands(connection), checked, args),
                timeout,
                "redis",
                "breaking claims of " + checked);
        if (answer.isEmpty() || !"deleted".equals(String.valueOf(answer.get(0)))) {
            return List.of();
        }
        return answer.subList(1, answer.size()).stream().map(String::valueOf).toList();
    }

    private static io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands<String, String> commands(
            io.lettuce.core.api.StatefulConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        if (connection instanceof io.lettuce.core.api.StatefulRedisConnection<String, String> c) {
            return c.async();
        } else if (connection instanceof io.lettuce.core.cluster.api.StatefulRedisClusterConnection<String, String> c) {
            return c.async();
        }
        throw new IllegalArgumentException("not a Redis or Redis Cluster connection: " + connection);
    }

    /** @return the session's time to live ({@link RedisOptions#ttl()}) */
    @Override
    public Duration ttl() {
        return core.ttl();
    }

    /**
     * How long this session is valid from now, on the local monotonic clock: until it declares itself lost unless a
     * newer renewal round is answered.
     *
     * @return the remaining validity; zero once lost or closed
     */
    @Override
    public Duration remainingValidity() {
        return core.remainingValidity();
    }

    /** @return the owner's id: a random positive long, recorded in every claim of this session */
    @Override
    public long leaseId() {
        return core.ownerId();
    }

    /** @return the owner's id in hex, as the client's status names it */
    @Override
    public String id() {
        return Long.toHexString(core.ownerId());
    }

    /** @return {@code redis owner <id> (TTL <ms> ms)}, as the client's messages name an owner */
    @Override
    public String describe() {
        return "redis owner " + id() + " (TTL " + core.ttl().toMillis() + " ms)";
    }

    /**
     * Completes, once, when the session is lost or closed, on the callback executor; always normally.
     *
     * @return the session's end
     */
    @Override
    public CompletionStage<Void> done() {
        return core.done().minimalCompletionStage();
    }

    /** @return why the session was lost, once it was; empty while it lives or after a plain close */
    @Override
    public Optional<DiscoException> err() {
        return Optional.ofNullable(core.lossOrNull());
    }

    /** Closes every service of this session, releasing what they hold, then its connections. Idempotent. */
    @Override
    public void close() {
        core.close();
    }

    @Override
    public String toString() {
        return core.toString();
    }

    /** @return the session's core (for the test hooks) */
    SessionCore core() {
        return core;
    }
}

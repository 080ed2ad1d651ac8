package io.disco.provider.zookeeper;

import io.disco.client.Barriers;
import io.disco.client.DiscoBackend;
import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.DiscoSession;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * One owner on ZooKeeper: the session of a started {@code CuratorFramework}, on which locks, read/write locks,
 * semaphores and elections are created, at most one per name (semaphores excepted: one session may hold several
 * permits of one semaphore, a service each), and through which the client's barriers run ({@link #barriers()}). The public front of the session: it opens it
 * ({@code SessionHandOut}), has the services make themselves on it and answers for it; what the services see of
 * the session, and what runs it, is its {@code SessionCore}. It is the client's owner on ZooKeeper (a
 * {@link DiscoBackend.Owner}): the client of {@link ZooKeeperProvider} opens one at a time on the application's
 * {@code CuratorFramework}, a {@link ZooKeeperDiscoBackend} one on each client it builds.
 *
 * <h2>Loss</h2>
 * The session's time to live is the client's negotiated session timeout {@code T}. The session sends a
 * {@code sync} (which a follower passes to the leader and back; a read it would answer alone, also when the leader,
 * which expires sessions, no longer hears it) every {@code T/4} and remembers the local monotonic time at which the
 * latest <em>answered</em> one was sent: the leader had heard from this session by then, so it cannot expire the
 * session before that time plus {@code T}. The session declares itself lost, and {@link #done()} and every service's {@code done()} complete,
 * when {@code 2T/3} have passed since then without a newer answer, when Curator reports the connection LOST, or
 * when the client comes back on another session; so the loss is signalled before the server could have expired
 * the session (Curator's own LOST comes only after the whole timeout: Tech Note 14). While Curator reports the
 * connection SUSPENDED no new grant is committed; a grant already held stays held until the deadline
 * ({@code SessionLiveness}).
 *
 * <h2>Threads</h2>
 * Curator's event thread only hands events to this session's thread ({@code disco-zk-session-<id>}); the
 * waiting acquisitions run on {@code disco-zk-worker-<id>-N} threads; futures handed to the user complete on the
 * callback executor ({@link ZooKeeperOptions.Builder#callbackExecutor}). No user code runs on Curator's threads
 * or the session's ({@code SessionExecutors}).
 *
 * <h2>Who closes what</h2>
 * {@link #close()} closes every service of this session (releasing what they hold) and stops watching the
 * session; it does not close the {@code CuratorFramework}, which belongs to the caller (closing it ends the
 * ZooKeeper session, and with it any node left behind).
 */
public final class ZooKeeperSession implements DiscoSession, DiscoBackend.Owner {

    /** Everything but the public face: what the services depend on. */
    private final SessionCore core;

    /** The barriers through this session. */
    private final ZkBarriers barriers;

    private ZooKeeperSession(CuratorFramework client, ZooKeeperOptions options, SessionHandOut.Opened opened) {
        this.core = new SessionCore(this, client, options, opened); // listeners are told later, on another thread
        this.barriers = ZkBarriers.create(core);
    }

    /**
     * Opens a session on a started client, waiting at most {@link ZooKeeperOptions#connectTimeout()} for it to
     * connect.
     *
     * @param client a started Curator client; its session timeout is this session's time to live
     * @param options the options
     * @return the open session
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if the client was not started, or is closed
     * @throws DiscoException if ZooKeeper could not be reached in time (the message names the connect string),
     *     or no request was answered early enough to hand the session out with half its validity window
     *     ({@code T/3}) left within the request timeout
     */
    public static ZooKeeperSession open(CuratorFramework client, ZooKeeperOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException(
                    "the CuratorFramework is " + client.getState() + ": start it before opening a session");
        }
        return new ZooKeeperSession(client, options, SessionHandOut.open(client, options));
    }

    /**
     * Opens a session with the {@linkplain ZooKeeperOptions#defaults() default options}.
     *
     * @param client a started Curator client
     * @return the open session
     * @see #open(CuratorFramework, ZooKeeperOptions)
     */
    public static ZooKeeperSession open(CuratorFramework client) {
        return open(client, ZooKeeperOptions.defaults());
    }

    /**
     * Creates a lock on {@code name} on this session (see {@link LockService} for the contract). The lock's
     * nodes are those of Curator's {@code InterProcessMutex}: {@code <name>/_c_<uuid>-lock-<sequence>}; the
     * token of a grant is the czxid of the owner's own node.
     *
     * @param name the lock's ZooKeeper name, absolute
     * @return the lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public LockService newLock(String name) {
        return ZkLockService.create(core, name);
    }

    /**
     * Creates a read/write lock on {@code name} on this session (see {@link RWLockService} for the contract).
     * Its nodes are those of Curator's {@code InterProcessReadWriteLock}: {@code <name>/_c_<uuid>-__READ__<seq>}
     * and {@code <name>/_c_<uuid>-__WRIT__<seq>}; the phase marker that gives the readers of one phase their
     * shared token is {@code /disco-rwlock-phase<name>}.
     *
     * @param name the lock's ZooKeeper name, absolute
     * @return the read/write lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public RWLockService newRWLock(String name) {
        return ZkRWLockService.create(core, name);
    }

    /**
     * Creates a semaphore of {@code limit} permits on {@code name} on this session (see {@link SemaphoreService}
     * for the contract): holders queue as {@code <name>/leases/_c_<uuid>-lease-<seq>}, each admitted holder
     * claims a slot {@code <name>/slots/<i>}, and the token is that slot node's czxid.
     *
     * @param name the semaphore's ZooKeeper name, absolute
     * @param limit the number of permits, at least 1
     * @return the semaphore; closing it releases its permit and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid, {@code limit < 1}, or the semaphore
     *                                  exists with another limit
     * @throws IllegalStateException if this session already has a service on {@code name} other than a semaphore, or is closed or lost
     * @throws DiscoException if ZooKeeper failed while the limit was checked
     */
    public SemaphoreService newSemaphore(String name, int limit) {
        return ZkSemaphoreService.create(core, name, limit);
    }

    /**
     * Creates a candidate (and observer) of the election on {@code name} on this session (see
     * {@link ElectionService} for the contract). Its nodes are those of Curator's {@code LeaderLatch}:
     * {@code <name>/_c_<uuid>-latch-<sequence>}, the data the candidate's value, so disco candidates and
     * {@code LeaderLatch}es on one name share one succession; the token of a term is the czxid of the leader's
     * own node. {@link ElectionService#leader()} and {@link ElectionService#observe} read the lowest node's data.
     *
     * @param name the election's ZooKeeper name, absolute
     * @return the election; closing it resigns and keeps this session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if this session already has a service on {@code name}, or is closed or lost
     */
    public ElectionService newElection(String name) {
        return newElection(name, null);
    }

    /** An election that runs {@code afterClose} once it is closed (an election that owns this session). */
    ElectionService newElection(String name, Runnable afterClose) {
        return ZkElectionService.create(core, name, afterClose);
    }

    /**
     * Who holds and who waits for {@code name} as {@code primitive}: the holders first, then the waiters, each in
     * queue (sequence) order, with its node, session (as the lease id), token and {@linkplain ClaimMetadata
     * metadata} (the JSON this library writes into the data of its lock, read/write lock and semaphore nodes).
     * Read in one consistent snapshot: a read-only {@code multi} of the queue's nodes and what gives their
     * tokens. Tokens: a lock holder's is its node's czxid; readers of a read/write lock share the phase marker's
     * czxid, a writer's is its node's mzxid (set by its admission transaction; empty for a plain Curator writer);
     * a semaphore holder's is the mzxid of the slot that names its node; a leader's is its node's czxid. Nodes
     * of Curator's recipes are listed too, with the metadata their data allows. Only reads: works on any name,
     * and while this session is lost or closed as long as the client is open.
     *
     * @param primitive what the name is
     * @param name the primitive's ZooKeeper name
     * @return the claimants, holders then waiters; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if called on a session thread
     * @throws DiscoException if ZooKeeper failed or the listing changed under every read
     */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return new ZkClaimantListing(core.client(), core.connectString()).list(primitive, name);
    }

    /**
     * Who holds and who waits for {@code name} as {@code primitive}, read through {@code client} without a session:
     * the same listing, order and tokens as {@link #claimants(Primitive, String)}, for tools (the {@code disco} tool
     * lists with it): it creates no node and writes nothing, so a read-only ACL suffices. A snapshot, for people:
     * never take a token from here to fence with. Each read waits as long as the client's retry policy and
     * connection timeout let it.
     *
     * @param client a started Curator client (not closed)
     * @param primitive what the name is
     * @param name the primitive's ZooKeeper name
     * @return the claimants, holders then waiters; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if called on a session thread
     * @throws DiscoException if ZooKeeper failed or the listing changed under every read
     */
    public static List<Claimant> claimants(CuratorFramework client, Primitive primitive, String name) {
        Objects.requireNonNull(client, "client");
        return new ZkClaimantListing(client, client.getZookeeperClient().getCurrentConnectionString())
                .list(primitive, name);
    }

    /**
     * The barriers and double barriers through this session, on the nodes of Curator's recipes: a barrier is the
     * persistent node {@code <name>} ({@code DistributedBarrier}'s), a double barrier participant the ephemeral node
     * {@code <name>/<uuid>} of this session, the barrier open once {@code <name>/ready} is there
     * ({@code DistributedDoubleBarrier}'s). For the client ({@code Disco.barrier}, {@code Disco.doubleBarrier}).
     *
     * @return the barrier steps
     */
    @Override
    public Barriers barriers() {
        return barriers;
    }

    /** @return the session timeout ZooKeeper negotiated: this owner's time to live */
    @Override
    public java.time.Duration ttl() {
        return core.ttl();
    }

    /**
     * How long this session is valid from now, on the local monotonic clock: until it declares itself lost
     * unless a newer request is answered ({@code 2T/3} after the send time of the newest answered one). A
     * session is handed out with at least half of that window ({@code T/3}) left.
     *
     * @return the remaining validity; zero once lost or closed
     */
    @Override
    public java.time.Duration remainingValidity() {
        return core.remainingValidity();
    }

    /** @return the ZooKeeper session id this session watches */
    public long sessionId() {
        return core.sessionId();
    }

    /** @return the ZooKeeper session id: {@link #sessionId()} */
    @Override
    public long leaseId() {
        return core.sessionId();
    }

    /** @return the ZooKeeper session id in hex, as the client's status and the owners of nodes name it */
    @Override
    public String id() {
        return Long.toHexString(core.sessionId());
    }

    /** @return {@code session 0x<id> (timeout <ms> ms)}, as the client's messages name an owner */
    @Override
    public String describe() {
        return "session 0x" + id() + " (timeout " + core.ttl().toMillis() + " ms)";
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
        return Optional.ofNullable(core.err());
    }

    /** Closes every service of this session and stops watching it; the client stays open. Idempotent. */
    @Override
    public void close() {
        core.close();
    }

    @Override
    public String toString() {
        return core.toString();
    }

    /** @return where the session stands (for tests) */
    SessionState state() {
        return core.state();
    }

    /** @return the client the session runs on (for tests) */
    CuratorFramework client() {
        return core.client();
    }
}

package io.disco.provider.zookeeper;

import io.disco.client.Names;
import io.disco.core.internal.Callbacks;
import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * One owner on ZooKeeper: the session of a started {@code CuratorFramework}, on which locks, read/write locks,
 * semaphores and elections are created, at most one per path.
 *
 * <h2>Loss</h2>
 * The session's time to live is the client's negotiated session timeout {@code T}. The session sends a tiny
 * request every {@code T/4} and remembers the local monotonic time at which the latest <em>answered</em> one was
 * sent: the server had heard from this session by then, so it cannot expire the session before that time plus
 * {@code T}. The session declares itself lost, and {@link #done()} and every service's {@code done()} complete,
 * when {@code 2T/3} have passed since then without a newer answer, when Curator reports the connection LOST, or
 * when the client comes back on another session; so the loss is signalled before the server could have expired
 * the session (Curator's own LOST comes only after the whole timeout: Tech Note 14). While Curator reports the
 * connection SUSPENDED no new grant is committed; a grant already held stays held until the deadline.
 *
 * <h2>Threads</h2>
 * Curator's event thread only hands events to this session's thread ({@code disco-zk-session-<id>}); the
 * waiting acquisitions run on {@code disco-zk-worker-<id>-N} threads; futures handed to the user complete on the
 * callback executor ({@link ZooKeeperOptions.Builder#callbackExecutor}). No user code runs on Curator's threads
 * or the session's.
 *
 * <h2>Who closes what</h2>
 * {@link #close()} closes every service of this session (releasing what they hold) and stops watching the
 * session; it does not close the {@code CuratorFramework}, which belongs to the caller (closing it ends the
 * ZooKeeper session, and with it any node left behind).
 */
public final class ZooKeeperSession implements AutoCloseable {

    private final CuratorFramework client;
    private final ZooKeeperOptions options;
    private final Callbacks callbacks;
    private final String connectString;
    private final long sessionId;
    private final long timeoutNanos;
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final ConnectionStateListener listener = this::onConnectionState;
    private final ScheduledFuture<?> pinger;
    private final ScheduledFuture<?> watchdog;
    /** The local send time of the newest request that was answered on this session. */
    private final AtomicLong lastHeard;

    private final Object lock = new Object();
    private SessionState state = SessionState.CONNECTED;
    private DiscoException loss;
    private final Map<String, SessionMember> members = new LinkedHashMap<>();
    private final List<Semaphore> parked = new ArrayList<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** Who claims through this session: host and pid, looked up once; the thread and time are each claim's. */
    private final ClaimMetadata claimant = ClaimMetadata.ofCurrentThread("");

    private ZooKeeperSession(CuratorFramework client, ZooKeeperOptions options, long sessionId, int timeoutMs, long heard) {
        this.client = client;
        this.options = options;
        this.callbacks = new Callbacks(options.callbackExecutor());
        this.connectString = client.getZookeeperClient().getCurrentConnectionString();
        this.sessionId = sessionId;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.lastHeard = new AtomicLong(heard);
        String hex = Long.toHexString(sessionId);
        this.timer = SessionThread.newExecutor("disco-zk-session-" + hex);
        AtomicInteger count = new AtomicInteger();
        this.workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "disco-zk-worker-" + hex + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        client.getConnectionStateListenable().addListener(listener, timer);
        long ping = Math.max(10_000_000L, timeoutNanos / 4);
        this.pinger = timer.scheduleAtFixedRate(this::ping, ping, ping, TimeUnit.NANOSECONDS);
        long check = Math.max(5_000_000L, timeoutNanos / 24);
        this.watchdog = timer.scheduleAtFixedRate(this::checkDeadline, check, check, TimeUnit.NANOSECONDS);
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
            throw new IllegalStateException("the CuratorFramework is " + client.getState() + ": start it before opening a session");
        }
        String where = client.getZookeeperClient().getCurrentConnectionString();
        try {
            if (!client.blockUntilConnected((int) options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                throw new DiscoException("ZooKeeper at " + where + " could not be reached (no connection within "
                        + options.connectTimeout().toMillis() + " ms): " + ZooKeeperEndpoints.diagnose(where,
                        Duration.ofMillis(Math.min(1_000, Math.max(200, options.connectTimeout().toMillis() / 2)))));
            }
            long sent = System.nanoTime();
            client.checkExists().forPath("/");
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long heard = heardForHandOut(client, options, zk.getSessionTimeout(), sent, where);
            zk = client.getZookeeperClient().getZooKeeper();
            return new ZooKeeperSession(client, options, zk.getSessionId(), zk.getSessionTimeout(), heard);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while connecting to ZooKeeper at " + where, e);
        } catch (DiscoException e) {
            throw e;
        } catch (Exception e) {
            throw new DiscoException("ZooKeeper at " + where + " failed: " + e, e);
        }
    }

    /**
     * A new owner is handed out with at least half its validity window left: the window is {@code 2T/3} from
     * the send time of the newest answered request (see the class documentation), so at least {@code T/3}.
     * When the opening request's answer came later than that (a cold JVM's first request, a slow link), one
     * more request is sent, its send time starting the window again, until the session is valid for that
     * long, within the request timeout.
     *
     * @param sent the send time of the opening request, answered
     * @return the send time of the newest answered request, with at least {@code T/3} of the window left
     * @throws DiscoException if no request was answered early enough within the request timeout
     */
    private static long heardForHandOut(CuratorFramework client, ZooKeeperOptions options, int timeoutMs, long sent, String where)
            throws InterruptedException {
        long window = TimeUnit.MILLISECONDS.toNanos(timeoutMs) * 2 / 3;
        long threshold = window / 2;
        long start = System.nanoTime();
        long grantedWith = sent + window - start;
        if (grantedWith >= threshold) {
            return sent;
        }
        long deadline = start + options.requestTimeout().toNanos();
        long heard = sent;
        int asked = 0;
        String last = "";
        while (true) {
            long now = System.nanoTime();
            if (heard + window - now >= threshold) {
                return heard;
            }
            if (deadline - now <= 0) {
                throw new DiscoException("the ZooKeeper session at " + where + " opened with "
                        + TimeUnit.NANOSECONDS.toMillis(Math.max(0, grantedWith)) + " ms of its " + TimeUnit.NANOSECONDS.toMillis(window)
                        + " ms validity (2/3 of the session timeout of "
                        + timeoutMs + " ms, counted from when its first request was sent) left, under the "
                        + TimeUnit.NANOSECONDS.toMillis(threshold) + " ms (half of it) a new session is handed out with, and no"
                        + " request was answered early enough within the request timeout of " + options.requestTimeout().toMillis()
                        + " ms (" + asked + " sent" + last + "): not handed out");
            }
            long ask = System.nanoTime();
            CompletableFuture<Integer> answer = new CompletableFuture<>();
            asked++;
            try {
                client.checkExists().inBackground((c, event) -> answer.complete(event.getResultCode())).forPath("/");
                int code = answer.get(deadline - ask, TimeUnit.NANOSECONDS);
                if (code == KeeperException.Code.OK.intValue()) {
                    heard = ask;
                } else {
                    last = "; the last answered " + KeeperException.Code.get(code);
                    TimeUnit.NANOSECONDS.sleep(Math.max(0, Math.min(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime())));
                }
            } catch (java.util.concurrent.TimeoutException e) {
                last = "; the last unanswered";
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = "; the last failed: " + e;
            }
        }
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
     * Creates a lock on {@code path} on this session (see {@link LockService} for the contract). The lock's
     * nodes are those of Curator's {@code InterProcessMutex}: {@code <path>/_c_<uuid>-lock-<sequence>}; the
     * token of a grant is the czxid of the owner's own node.
     *
     * @param path the lock's ZooKeeper path, absolute
     * @return the lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code path} is blank or not a valid ZooKeeper path
     * @throws IllegalStateException if this session already has a service on {@code path}, or is closed or lost
     */
    public LockService newLock(String path) {
        String checked = checkPath(path);
        return register(checked, () -> new ZkLockService(this, checked));
    }

    /**
     * Creates a read/write lock on {@code path} on this session (see {@link RWLockService} for the contract).
     * Its nodes are those of Curator's {@code InterProcessReadWriteLock}: {@code <path>/_c_<uuid>-__READ__<seq>}
     * and {@code <path>/_c_<uuid>-__WRIT__<seq>}; the phase marker that gives the readers of one phase their
     * shared token is {@code /disco-rwlock-phase<path>}.
     *
     * @param path the lock's ZooKeeper path, absolute
     * @return the read/write lock; closing it releases it and keeps this session
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code path} is blank or not a valid ZooKeeper path
     * @throws IllegalStateException if this session already has a service on {@code path}, or is closed or lost
     */
    public RWLockService newRWLock(String path) {
        String checked = checkPath(path);
        return register(checked, () -> new ZkRWLockService(this, checked));
    }

    /**
     * Creates a semaphore of {@code limit} permits on {@code path} on this session (see {@link SemaphoreService}
     * for the contract): holders queue as {@code <path>/leases/_c_<uuid>-lease-<seq>}, each admitted holder
     * claims a slot {@code <path>/slots/<i>}, and the token is that slot node's czxid.
     *
     * @param path the semaphore's ZooKeeper path, absolute
     * @param limit the number of permits, at least 1
     * @return the semaphore; closing it releases its permit and keeps this session
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code path} is blank or invalid, {@code limit < 1}, or the semaphore
     *                                  exists with another limit
     * @throws IllegalStateException if this session already has a service on {@code path}, or is closed or lost
     * @throws DiscoException if ZooKeeper failed while the limit was checked
     */
    public SemaphoreService newSemaphore(String path, int limit) {
        String checked = checkPath(path);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        synchronized (lock) {
            if (members.containsKey(checked)) {
                throw new IllegalStateException("this session already has a service on " + checked + ": use one session per concurrent owner");
            }
        }
        ZkSemaphoreService.checkLimit(client, checked, limit);
        return register(checked, () -> new ZkSemaphoreService(this, checked, limit));
    }

    /**
     * Creates a candidate (and observer) of the election on {@code path} on this session (see
     * {@link ElectionService} for the contract). Its nodes are those of Curator's {@code LeaderLatch}:
     * {@code <path>/_c_<uuid>-latch-<sequence>}, the data the candidate's value, so disco candidates and
     * {@code LeaderLatch}es on one path share one succession; the token of a term is the czxid of the leader's
     * own node. {@link ElectionService#leader()} and {@link ElectionService#observe} read the lowest node's data.
     *
     * @param path the election's ZooKeeper path, absolute
     * @return the election; closing it resigns and keeps this session
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code path} is blank or not a valid ZooKeeper path
     * @throws IllegalStateException if this session already has a service on {@code path}, or is closed or lost
     */
    public ElectionService newElection(String path) {
        return newElection(path, null);
    }

    /** An election that runs {@code afterClose} once it is closed (an election that owns this session). */
    ElectionService newElection(String path, Runnable afterClose) {
        String checked = checkPath(path);
        return register(checked, () -> new ZkElectionService(this, checked, afterClose));
    }

    /**
     * Who holds and who waits for {@code path} as {@code primitive}: the holders first, then the waiters, each in
     * queue (sequence) order, with its node, session (as the lease id), token and {@linkplain ClaimMetadata
     * metadata} (the JSON this library writes into the data of its lock, read/write lock and semaphore nodes).
     * Read in one consistent snapshot: a read-only {@code multi} of the queue's nodes and what gives their
     * tokens. Tokens: a lock holder's is its node's czxid; readers of a read/write lock share the phase marker's
     * czxid, a writer's is its node's mzxid (set by its admission transaction; empty for a plain Curator writer);
     * a semaphore holder's is the mzxid of the slot that names its node; a leader's is its node's czxid. Nodes
     * of Curator's recipes are listed too, with the metadata their data allows. Only reads: works on any path,
     * and while this session is lost or closed as long as the client is open.
     *
     * @param primitive what the path is
     * @param path the primitive's ZooKeeper path
     * @return the claimants, holders then waiters; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code path} is blank or not a valid ZooKeeper path
     * @throws IllegalStateException if called on a session thread
     * @throws DiscoException if ZooKeeper failed or the listing changed under every read
     */
    public List<Claimant> claimants(Primitive primitive, String path) {
        return new ZkClaimantListing(client, connectString).list(primitive, path);
    }

    /** @return the metadata of a claim made now by the calling thread, as the data of its node */
    byte[] claimData() {
        return claimant.now().toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** @return the session timeout ZooKeeper negotiated: this owner's time to live */
    public java.time.Duration ttl() {
        return java.time.Duration.ofNanos(timeoutNanos);
    }

    /**
     * How long this session is valid from now, on the local monotonic clock: until it declares itself lost
     * unless a newer request is answered ({@code 2T/3} after the send time of the newest answered one). A
     * session is handed out with at least half of that window ({@code T/3}) left.
     *
     * @return the remaining validity; zero once lost or closed
     */
    public java.time.Duration remainingValidity() {
        checkClientOpen();
        synchronized (lock) {
            if (state == SessionState.LOST || state == SessionState.CLOSED) {
                return java.time.Duration.ZERO;
            }
        }
        return java.time.Duration.ofNanos(Math.max(0, lastHeard.get() + timeoutNanos * 2 / 3 - System.nanoTime()));
    }

    /** @return the ZooKeeper session id this session watches */
    public long sessionId() {
        return sessionId;
    }

    /**
     * Completes, once, when the session is lost or closed, on the callback executor; always normally.
     *
     * @return the session's end
     */
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    /** @return why the session was lost, once it was; empty while it lives or after a plain close */
    public Optional<DiscoException> err() {
        checkClientOpen();
        synchronized (lock) {
            return Optional.ofNullable(loss);
        }
    }

    /** Closes every service of this session and stops watching it; the client stays open. Idempotent. */
    @Override
    public void close() {
        List<SessionMember> toClose;
        synchronized (lock) {
            if (state == SessionState.CLOSED) {
                return;
            }
            state = state.to(SessionState.CLOSED);
            toClose = new ArrayList<>(members.values());
            unparkLocked();
        }
        for (SessionMember m : toClose) {
            m.sessionClosed();
        }
        finish();
    }

    @Override
    public String toString() {
        return "ZooKeeperSession(0x" + Long.toHexString(sessionId) + " at " + connectString + ", " + state() + ")";
    }

    // ------------------------------------------------------------------ for the services

    CuratorFramework client() {
        return client;
    }

    Callbacks callbacks() {
        return callbacks;
    }

    ZooKeeperOptions options() {
        return options;
    }

    String connectString() {
        return connectString;
    }

    ExecutorService workers() {
        return workers;
    }

    ScheduledThreadPoolExecutor timer() {
        return timer;
    }

    SessionState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** @return the loss, if the session is lost; throws nothing */
    DiscoException lossOrNull() {
        synchronized (lock) {
            return loss;
        }
    }

    /**
     * Parks {@code wake} until the session is connected again (or lost, or closed), if it is suspended now.
     *
     * @return true if the session is suspended (the caller waits on {@code wake}), false if it is connected
     */
    boolean parkIfSuspended(Semaphore wake) {
        synchronized (lock) {
            if (state != SessionState.SUSPENDED) {
                return false;
            }
            parked.add(wake);
            return true;
        }
    }

    void unregister(String path, SessionMember member) {
        synchronized (lock) {
            members.remove(path, member);
        }
    }

    /** A background delete that Curator keeps retrying until it succeeds or the session ends. */
    void deleteInBackground(String node) {
        try {
            client.delete().guaranteed().inBackground().forPath(node);
        } catch (Exception e) {
            // the client is closed: the session, and the ephemeral node with it, ends anyway
        }
    }

    private <T extends SessionMember> T register(String path, java.util.function.Supplier<T> factory) {
        checkClientOpen();
        synchronized (lock) {
            if (state == SessionState.CLOSED) {
                throw new IllegalStateException("the ZooKeeper session is closed: " + this);
            }
            if (state == SessionState.LOST) {
                throw new IllegalStateException("the ZooKeeper session is lost (" + loss.getMessage() + "): open a new one");
            }
            if (members.containsKey(path)) {
                throw new IllegalStateException("this session already has a service on " + path + ": use one session per concurrent owner");
            }
            T member = factory.get();
            members.put(path, member);
            return member;
        }
    }

    static String checkPath(String path) {
        Names.check(path, "path"); // the name rule of every backend and of the client, up front
        PathUtils.validatePath(path);
        return path;
    }

    // ------------------------------------------------------------------ liveness, on the session's thread

    private void ping() {
        if (state() != SessionState.CONNECTED && state() != SessionState.SUSPENDED
                || client.getState() != CuratorFrameworkState.STARTED) {
            return;
        }
        long sent = System.nanoTime();
        try {
            client.checkExists().inBackground((c, event) -> {
                if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                    return;
                }
                if (c.getZookeeperClient().getZooKeeper().getSessionId() != sessionId) {
                    // on the timer; once it is shut down (the session already ended), here: lose() then does nothing
                    SessionTasks.onSessionThread(this, () -> lose("the ZooKeeper session 0x" + Long.toHexString(sessionId)
                            + " at " + connectString + " expired: the client is on a new session", null));
                    return;
                }
                lastHeard.accumulateAndGet(sent, Math::max);
            }).forPath("/");
        } catch (Exception e) {
            // the client is closing; the deadline decides
        }
    }

    private void checkDeadline() {
        if (checkClientOpen()) {
            return;
        }
        long silent = System.nanoTime() - lastHeard.get();
        if (silent > timeoutNanos * 2 / 3) {
            lose("no answer from ZooKeeper at " + connectString + " for " + TimeUnit.NANOSECONDS.toMillis(silent)
                    + " ms, two thirds of the session timeout of " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms: the server may expire session 0x" + Long.toHexString(sessionId), null);
        }
    }

    /** What messages say when the application closed the client first. */
    static final String CLOSED_FIRST = "the CuratorFramework was closed before the ZooKeeper session that runs on it"
            + " (close the session, or the Disco, first and the CuratorFramework last)";

    /**
     * The application closed the {@code CuratorFramework} under this session, a shutdown-order mistake: the session
     * is lost at once, with that reason (instead of after its deadline, as if ZooKeeper were silent), and nothing is
     * registered on it any more. Curator says nothing to the session's listeners when it is closed, so this is
     * checked by the watchdog and whenever the session is asked for its state.
     *
     * @return whether the client is closed
     */
    private boolean checkClientOpen() {
        if (client.getState() != CuratorFrameworkState.STOPPED) {
            return false;
        }
        lose("the ZooKeeper session 0x" + Long.toHexString(sessionId) + " at " + connectString + " is lost: " + CLOSED_FIRST, null);
        return true;
    }

    private void onConnectionState(CuratorFramework c, ConnectionState newState) {
        switch (newState) {
            case SUSPENDED, READ_ONLY -> move(SessionState.SUSPENDED);
            case RECONNECTED, CONNECTED -> {
                long now;
                try {
                    now = c.getZookeeperClient().getZooKeeper().getSessionId();
                } catch (Exception e) {
                    now = 0;
                }
                if (now != sessionId) {
                    lose("the ZooKeeper session 0x" + Long.toHexString(sessionId) + " at " + connectString
                            + " expired: the client reconnected on a new session", null);
                } else {
                    move(SessionState.CONNECTED);
                }
            }
            case LOST -> lose("Curator reports the connection to ZooKeeper at " + connectString + " LOST (session 0x"
                    + Long.toHexString(sessionId) + ")", null);
        }
    }

    private void move(SessionState to) {
        synchronized (lock) {
            if (state == to || !state.mayMoveTo(to)) {
                return;
            }
            state = state.to(to);
            if (to == SessionState.CONNECTED) {
                unparkLocked();
            }
        }
    }

    /** Declares the session lost: every service is told, then done() completes. */
    void lose(String reason, Throwable cause) {
        List<SessionMember> toTell;
        synchronized (lock) {
            if (!state.mayMoveTo(SessionState.LOST)) {
                return;
            }
            state = state.to(SessionState.LOST);
            loss = new DiscoException(reason, cause);
            toTell = new ArrayList<>(members.values());
            members.clear();
            unparkLocked();
        }
        for (SessionMember m : toTell) {
            m.sessionLost(reason, cause);
        }
        finish();
    }

    private void unparkLocked() {
        for (Semaphore s : parked) {
            s.release();
        }
        parked.clear();
    }

    private void finish() {
        pinger.cancel(false);
        watchdog.cancel(false);
        client.getConnectionStateListenable().removeListener(listener);
        callbacks.deliver(() -> done.complete(null));
        timer.shutdown();
        workers.shutdown();
    }
}

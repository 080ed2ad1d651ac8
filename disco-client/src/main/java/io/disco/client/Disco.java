package io.disco.client;

import io.disco.barrier.Barrier;
import io.disco.barrier.DoubleBarrier;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.lock.FencedLock;
import java.util.List;
import java.util.Objects;

/**
 * One client per application: the entry point that the threads of a service share, like Redisson's
 * {@code RedissonClient} or Hazelcast's CP subsystem. Create it once (for etcd:
 * {@code EtcdProvider.disco(client, options)}), share it (it is thread-safe), close it at shutdown.
 *
 * <pre>{@code
 * FencedLock lock = disco.lock("/locks/order-" + id);
 * if (!lock.tryLock(2, TimeUnit.SECONDS)) {     // a request path bounds its wait
 *     return busy(id);
 * }
 * try {
 *     repository.save(order, lock.token());
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One owner.</b> The client holds one owner in the backend (for etcd: one lease, kept alive
 *       in the background) and makes every claim through it. Locks are owned by threads: the threads of
 *       one process on one name queue locally and fairly behind a single claim in the backend: the
 *       process holds one place in the backend's first-come-first-served queue, and a hand-over between two
 *       of its threads goes through the backend, behind the processes that asked before it (so a waiting
 *       thread is overtaken by at most one hold of each other process per turn of its own). Once a writer of
 *       any process queued behind a read claim of this process, no more of its readers join that claim. The
 *       rule, with the reasons: docs/client.md, "Fairness".</li>
 *   <li><b>Names.</b> A name is an absolute path such as {@code /locks/orders}, by one rule on every
 *       backend ({@link Names}: starting with {@code '/'}, not ending in {@code '/'}, no empty, {@code .}
 *       or {@code ..} segment, no character a backend cannot store), checked up front (refused with
 *       {@link IllegalArgumentException}). A name that nobody holds or waits for has no key; the client
 *       keeps its service (for etcd: a watch of its own key) for at least a third of a second and at
 *       most half a second, so that a name locked again at once does not pay for a new one, and after
 *       that nothing: no watch, no memory. Handles are cheap and may be kept or dropped. While a name is held or waited for, using a name nested
 *       in it ({@code /locks/orders/42} under {@code /locks/orders}) or one it is nested in, or the same
 *       name as another primitive, is refused with an {@link IllegalStateException} naming
 *       both: their keys would share a range.</li>
 *   <li><b>Nested names across processes exclude one way only.</b> A claimant of {@code /a} queues
 *       behind every key under {@code /a/}, so it waits for holders of {@code /a/b} in other processes;
 *       a claimant of {@code /a/b} does not see the key of a holder of {@code /a}, and gets
 *       {@code /a/b} while {@code /a} is held. Do not rely on a parent name to exclude its children.</li>
 *   <li><b>Tokens.</b> Every hold has a fencing token strictly greater than every earlier hold's of the
 *       same name, by any owner in any process (readers of one read phase share one).</li>
 *   <li><b>Self-healing.</b> When the owner is lost (its lease expired while the backend was
 *       unreachable or the process paused, or was revoked), every hold made through it reports the loss:
 *       its {@code done()} completes, {@code err()} tells it, and {@code token()} and the last
 *       {@code unlock()} throw the primitive's lost exception ({@code LockLostException},
 *       {@code RWLockLostException}; for a semaphore's permit, {@code done(permit)}, {@code err(permit)} and
 *       {@code release(permit)}, which throws {@code SemaphoreLostException}). The client opens a new owner at once and, while that fails, again
 *       after a backoff of 100 ms that doubles up to 1 s, so that it is up within about a second of the backend
 *       answering again; it logs once at INFO when it has an owner again (which, and how long it had none). An
 *       acquisition that was waiting at the moment of loss held nothing: it claims again through the new
 *       owner, within its own timeout, and acquisitions started later wait for the new owner the same way.
 *       A claim that fails with a backend error while the loss is not yet known (for etcd: "lease not
 *       found", after a revoke) is taken for the loss if the owner reports it within a second. A thread that holds a lost lock
 *       keeps it locally until it unlocks, so this process's other threads on that name wait for that
 *       unlock.</li>
 *   <li><b>No owner, no endless wait.</b> While the client has no owner, an acquisition waits for one at most
 *       the backend's owner wait ({@link DiscoBackend#ownerWait()}; for etcd {@code EtcdOptions.ownerWait},
 *       by default the TTL), counted from when the client lost it, and then throws
 *       {@link BackendUnavailableException} naming the backend's endpoints and the last failure; once an outage
 *       has lasted that long, acquisitions fail at once until an owner is open again. A timed acquisition whose
 *       own timeout ends first ({@code tryLock(timeout)}) returns as before. Request paths should use
 *       {@code tryLock(timeout)}; {@code lock()} is for work that may wait for the holder as long as it takes.</li>
 *   <li><b>Threads.</b> No user code runs on a thread that keeps the owner alive or detects its loss.</li>
 * </ul>
 *
 * <h2>Who closes what</h2>
 * {@link #close()} releases everything the client holds and ends its owner (for etcd: revokes the
 * lease); a thread that then unlocks gets no error, and later acquisitions fail with
 * {@link IllegalStateException}. It never closes the backend's client (the jetcd {@code Client}),
 * which the application owns: close this client first, the backend's client last. The other order is
 * detected ({@link DiscoBackend#clientClosed()}): the client stops at once, its {@link #status()} is
 * {@link DiscoStatus.State#CLOSED} with the reason, every operation throws {@link IllegalStateException}
 * saying the backend's client was closed first, a hold made before reports its loss, nothing is retried,
 * and what it held stays in the backend until its owner's TTL runs out.
 *
 * <p>Below the client are the per-owner services ({@code LockService}, {@code RWLockService}, ...),
 * one owner each, which a backend's own API creates; the client is made of them.
 */
public interface Disco extends AutoCloseable {

    /**
     * The lock named {@code name}. Every call with one name gives a handle on the same lock; the
     * handle holds no resource until a thread locks.
     *
     * @param name the lock's name, for example {@code /locks/orders}
     * @return the lock, owned per thread and reentrant
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed
     */
    FencedLock lock(String name);

    /**
     * The read/write lock named {@code name}; same naming rules as {@link #lock(String)}. Its keys are
     * those of etcd's Go {@code recipes.RWMutex} on the name.
     *
     * @param name the read/write lock's name
     * @return the read/write lock, owned per thread and reentrant in each mode
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed
     */
    FencedReadWriteLock readWriteLock(String name);

    /**
     * The semaphore named {@code name}, with {@code permits} permits; same naming rules as
     * {@link #lock(String)}. Any number of this process's threads may hold permits at once, each its own
     * holder in the backend on the client's one owner (for etcd: one more key on the same lease), each
     * permit with its own slot and slot token; see {@link FencedSemaphore}. Its keys are those of the Go
     * disco semaphore on the name, so Go holders count in the same limit.
     *
     * @param name the semaphore's name
     * @param permits how many may hold a permit at once, in every process together; the same for every
     *     holder of the name
     * @return the semaphore; the handle holds nothing until a permit is acquired
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names}), {@code permits < 1},
     *     or this client holds or waits on the name with another number of permits
     * @throws IllegalStateException if the client is closed
     */
    FencedSemaphore semaphore(String name, int permits);

    /**
     * The barrier named {@code name}: a gate one process holds up and any process lowers, while others wait for it
     * to fall; same naming rules as {@link #lock(String)}. Its key belongs to no owner: it stays up when the process
     * that raised it is lost (see {@link Barrier}). On etcd its key is the name itself, as etcd's Go
     * {@code recipe.Barrier} writes it; on ZooKeeper its node, as Curator's {@code DistributedBarrier} does.
     *
     * @param name the barrier's name, for example {@code /barriers/migration-42}
     * @return the barrier; the handle holds nothing
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed
     */
    Barrier barrier(String name);

    /**
     * A new participant of the double barrier named {@code name} for {@code participants} participants: its
     * {@code enter()} waits until that many have entered, its {@code leave()} until all have left (see
     * {@link DoubleBarrier}). Each call is one more participant, whose key is on the client's owner; same naming
     * rules as {@link #lock(String)}. Every participant of a name must use the same number.
     *
     * @param name the double barrier's name, for example {@code /barriers/batch-7}
     * @param participants how many participants the barrier gathers, positive
     * @return the participant, outside
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names}), or {@code participants < 1}
     * @throws IllegalStateException if the client is closed
     */
    DoubleBarrier doubleBarrier(String name, int participants);

    /**
     * This client's candidate in the election {@code name}: an {@link ElectionService} on the client's
     * owner of the moment, with the service's whole contract. Unlike a lock, a candidate is one owner's
     * (its key is the owner's, for etcd {@code <name>/<lease id in hex>}), so it is not self-healing:
     * when the owner is lost the service is finished ({@code done()} completes, {@code err()} tells,
     * a held leadership is lost), and a new call gives a candidate on the new owner. For a leader that
     * campaigns again by itself after a loss, use {@link #leadershipRunner}.
     *
     * <p>One candidate per client and name: while one is open, another {@code election(name)} (or a
     * runner's campaign on the name) is refused. The caller closes it; closing resigns if it leads and
     * withdraws a pending campaign, and leaves the client open. The name is in use, for the rules of
     * {@link #lock(String)} on nested names and kinds, until the service is closed or finished.
     *
     * @param name the election's name, for example {@code /elections/billing}
     * @return a new candidate; close it
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed, already has a candidate on {@code name}, or
     *         uses a name nested with it (or the name itself as another primitive)
     * @throws io.disco.fencing.DiscoException if the client has no owner right now (it is opening a new
     *         one after a loss: try again) or the backend failed
     */
    ElectionService election(String name);

    /**
     * Starts a leadership runner on the election {@code name} whose candidates are this client's: each
     * attempt campaigns with {@link #election(String)} on the client's owner of the moment, so after a
     * loss (the runner's term ends with {@code LOST}) it campaigns again on the owner the client opens in
     * its place, after the runner's backoff. Everything else is {@link LeadershipRunner}'s contract:
     * one task at a time, the task signalled at the end of its term, {@link LeadershipRunner#close()}
     * and {@link LeadershipRunner#close(java.time.Duration)} (a task that ignores its signal keeps the
     * leadership, not resigned, until it returns).
     *
     * <p>The runner is the caller's to close. {@link #close()} of the client signals every runner it
     * started (as {@code close(Duration.ZERO)}) and then ends the owner, so a task still running after
     * that has lost its leadership: close the runner first, with a bound, where the task must finish
     * while it leads.
     *
     * @param name the election's name
     * @param options the value, task, listener, requeue and backoff
     * @return the started runner
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed, or {@code name} is in use by this client
     *         (a candidate, another primitive, a nested name)
     */
    LeadershipRunner leadershipRunner(String name, LeadershipRunner.Options options);

    /**
     * Who holds and who waits for {@code name} as {@code primitive}, in any process: holders first, then
     * waiters in queue order, each with its key, lease, token (where the backend's state gives it) and
     * holder metadata (host, process id, client id, thread, claimed-at time: {@link Claimant#madeByDisco()},
     * present for claims this library made). One consistent read of the backend; it changes nothing and holds nothing. For people and
     * health checks: a token read here is never one to fence with.
     *
     * <pre>{@code
     * for (Claimant c : disco.claimants(Primitive.LOCK, "/locks/orders")) {   // io.disco.core types
     *     log.info("{} {} since {} by {}", c.role(), c.key(), c.madeByDisco().flatMap(ClaimMetadata::claimedAt),
     *             c.madeByDisco().map(ClaimMetadata::thread));
     * }
     * }</pre>
     *
     * @param primitive what the name is claimed as (the backend's keys differ per primitive)
     * @param name the name
     * @return the claims, holders first; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link Names})
     * @throws IllegalStateException if the client is closed
     * @throws io.disco.fencing.DiscoException if the backend cannot be read in time
     * @throws UnsupportedOperationException if the backend cannot list claims
     */
    List<Claimant> claimants(Primitive primitive, String name);

    /**
     * The client's state now: up with a live owner (its id, TTL and remaining validity), healing after a
     * loss or while no owner could be opened yet, or closed. Cheap and local (no request to the backend):
     * made for health checks.
     *
     * @return the status
     */
    DiscoStatus status();

    /**
     * The names this process holds or waits for through this client, sorted by name. Local (no request
     * to the backend); a snapshot. To see every process's holders of a name, ask the backend.
     *
     * @return the holdings; empty when nothing is held or waited for, and once closed
     */
    List<Holding> holdings();

    /**
     * Releases everything held, signals the leadership runners it started, and ends the owner (for etcd: revokes the lease); waits at most the
     * backend's request timeout. Never closes the backend's client. Idempotent.
     */
    @Override
    void close();

    /**
     * A client on {@code backend}; opens its first owner before returning. A backend's provider offers
     * the shortcut (for etcd: {@code EtcdProvider.disco(client, options)}).
     *
     * @param backend the backend
     * @return the client; close it at shutdown
     * @throws io.disco.fencing.DiscoException if the backend cannot be reached (the message says why, naming
     *     the endpoints)
     */
    static Disco over(DiscoBackend backend) {
        return over(backend, DiscoOptions.defaults());
    }

    /**
     * A client on {@code backend} with {@code options} (its observers, {@link DiscoOptions}); otherwise
     * {@link #over(DiscoBackend)}.
     *
     * @param backend the backend
     * @param options the client's options
     * @return the client; close it at shutdown
     * @throws NullPointerException if an argument is null
     * @throws io.disco.fencing.DiscoException if the backend cannot be reached (the message says why, naming
     *     the endpoints)
     */
    static Disco over(DiscoBackend backend, DiscoOptions options) {
        return new DiscoClient(
                Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(options, "options"), true);
    }

    /**
     * A client on {@code backend} that does not need the backend to answer now: it tries to open its
     * first owner before returning and, if that fails, returns anyway in {@link DiscoStatus.State#HEALING}
     * and keeps opening one in the background, after 100 ms and then with a backoff that doubles up to
     * 1 s, as after a loss. Acquisitions made meanwhile wait for the owner within their own timeouts and the
     * owner wait ({@link DiscoBackend#ownerWait()}, counted from the failed first attempt). For
     * applications that must start while the backend is down (a Spring Boot application whose health
     * check reports the client DOWN until it heals).
     *
     * @param backend the backend
     * @return the client; close it at shutdown
     */
    static Disco healing(DiscoBackend backend) {
        return healing(backend, DiscoOptions.defaults());
    }

    /**
     * A client on {@code backend} with {@code options} (its observers, {@link DiscoOptions}) that does not need
     * the backend to answer now; otherwise {@link #healing(DiscoBackend)}.
     *
     * @param backend the backend
     * @param options the client's options
     * @return the client; close it at shutdown
     * @throws NullPointerException if an argument is null
     */
    static Disco healing(DiscoBackend backend, DiscoOptions options) {
        return new DiscoClient(
                Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(options, "options"), false);
    }
}

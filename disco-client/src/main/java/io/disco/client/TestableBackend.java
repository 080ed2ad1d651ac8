package io.disco.client;

import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A {@link DiscoBackend} with the hooks that tests, demos and fault runs need and applications do not: what an
 * operator or a fault does to the backend from outside. The contract kit ({@code disco-contract-kit}), the demo
 * ({@code disco-examples}) and the chaos suite ({@code disco-chaos}) all run on it; each provider implements it once,
 * on its own {@code DiscoBackend} (etcd: {@code EtcdProvider.testableBackend}; ZooKeeper:
 * {@code ZooKeeperDiscoBackend}), with the same owners as {@link #open()} hands to the client. Not for production
 * code: a hook such as {@link #freeze} or {@link #deleteKey} breaks the guarantees the primitives give on purpose.
 *
 * <p>Words: a <em>name</em> is what a primitive is made on (an etcd key prefix, a ZooKeeper path); a <em>key</em> is a
 * string as a grant reports it in its {@code key()} (an etcd key, a ZooKeeper node's path); an owner's <em>id</em> is
 * its {@link Owner#id()} (an etcd lease, a ZooKeeper session, in hex).
 *
 * <p>Who closes what: the owners and runners these hooks open are the caller's to close, as are the clients
 * ({@link Disco}) made on {@link #withTtl} backends; {@link #close()} closes what the backend opened for its own hooks
 * (a ZooKeeper backend's admin client), never a client the caller handed it (a jetcd {@code Client}) and never an
 * owner. Implementations are thread-safe.
 */
public interface TestableBackend extends DiscoBackend, AutoCloseable {

    /**
     * Opens a new owner with the time to live {@code ttl}, independent of every other owner, as another process's
     * would be: {@code withTtl(ttl).open()}. Since no client stands in front of its services, they check their
     * arguments themselves (a null, blank or invalid name throws as the primitives' API says).
     *
     * @param ttl the owner's time to live (etcd: the lease TTL, whole seconds; ZooKeeper: the session timeout)
     * @return the owner; the caller closes it
     * @throws DiscoException if the backend cannot be reached or refuses
     * @throws IllegalArgumentException if the backend cannot grant such a time to live
     */
    default Owner open(Duration ttl) {
        return withTtl(ttl).open();
    }

    /**
     * This backend with owners of the time to live {@code ttl}: the same connection to the servers and the same
     * hooks (an owner it opens can be {@linkplain #freeze frozen} or {@linkplain #endOwnerOf ended} through either),
     * for a client ({@code Disco.over(backend.withTtl(ttl))}) or a runner whose owners must live that long. Closing
     * it closes nothing: close this backend when done.
     *
     * @param ttl the owners' time to live
     * @return the backend; this one when {@code ttl} is already its owners'
     * @throws IllegalArgumentException if the backend cannot grant such a time to live
     * @throws UnsupportedOperationException if the backend was made with one fixed time to live
     */
    TestableBackend withTtl(Duration ttl);

    /**
     * Starts a leadership runner on the election {@code name} whose every attempt runs on an owner of its own with
     * the time to live {@code ttl} (see {@link LeadershipRunner}).
     *
     * @param name the election's name
     * @param options the runner's value, task, listener, requeue and backoff
     * @param ttl each attempt's owner's time to live
     * @return the running runner; the caller closes it
     * @throws IllegalArgumentException if {@code name} is not a valid name for the backend
     */
    LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl);

    /**
     * Freezes {@code owner} as a stopped process (SIGSTOP, a long GC pause) would be: it stops keeping itself alive
     * (etcd: no more lease renewals; ZooKeeper: no more pings reach the servers) and releases nothing, and nobody
     * tells it. The backend ends it once its time to live passes without renewal, deleting its keys; until then a
     * waiter of another owner waits. The owner declares itself lost by its own clock, as it would after a freeze,
     * and its grants stay in the caller's hands, stale: a zombie for the guards to reject. Returns at once; the owner
     * is still the caller's to close.
     *
     * @param owner an owner this backend (or one of its {@link #withTtl} backends) opened, not closed
     * @throws IllegalArgumentException if the backend did not open {@code owner}
     * @throws IllegalStateException if the owner cannot be frozen (see the provider's documentation)
     */
    void freeze(Owner owner);

    /**
     * Ends {@code owner} from outside, as an operator or the servers would ({@code etcdctl lease revoke}, a
     * ZooKeeper session expired by the server): everything it held or waited for is deleted at once, and the owner
     * is told nothing beyond what the servers would tell it (a ZooKeeper client learns that its session expired, as on
     * its next contact), so every service on it must find out by itself. The owner is still the caller's to close.
     *
     * @param owner an owner this backend (or one of its {@link #withTtl} backends) opened
     * @throws IllegalArgumentException if the backend did not open {@code owner}
     * @throws DiscoException if the backend cannot be reached
     */
    void endOwner(Owner owner);

    /**
     * Ends the owner that {@code key} belongs to from outside, as {@link #endOwner} does, for an owner the caller
     * cannot reach (one a {@link Disco} client opened).
     *
     * @param key a key as {@link #keys(String)} lists it
     * @throws IllegalStateException if the key is absent, belongs to no owner, or to one this backend cannot end
     *     (a ZooKeeper session this backend did not open: ending it needs its password)
     * @throws DiscoException if the backend cannot be reached
     */
    void endOwnerOf(String key);

    /**
     * Lists, with a linearizable read, every key that owners of the primitive on {@code name} hold: the keys of
     * holders and of waiters, and any per-holder key that goes with them (a semaphore's slot claim). State that
     * belongs to no owner and outlives them (an rwlock's phase marker, ZooKeeper's parent nodes) is not listed. A
     * grant's {@code key()} is among them while it is held.
     *
     * @param name the primitive's name
     * @return the keys, sorted; empty when nobody holds or waits
     * @throws DiscoException if the backend cannot be read
     */
    List<String> keys(String name);

    /**
     * Deletes one key as an operator would ({@code etcdctl del}, {@code zkCli delete}), behind its owner's back.
     *
     * @param key a key as a grant reports it
     * @throws DiscoException if the backend cannot be written, or (ZooKeeper) the key is absent
     */
    void deleteKey(String key);

    /**
     * The owner {@code key} belongs to: etcd the lease it is attached to, ZooKeeper the session of an ephemeral
     * node, as the owner's {@link Owner#id()} says it.
     *
     * @param key a key as {@link #keys(String)} lists it
     * @return the owner's id; empty when the key is absent or belongs to no owner
     * @throws DiscoException if the backend cannot be read
     */
    Optional<String> ownerOf(String key);

    /**
     * Discards the history of past changes that the backend keeps, if it keeps one (etcd: compacts up to the
     * current revision), so that a waiter or observer that resumes from history has to cope. The default, for a
     * backend without such history (ZooKeeper), does nothing.
     *
     * @throws DiscoException if the backend cannot be reached
     */
    default void compactHistory() {}

    /**
     * Whether a claimant of a name waits for the holders of the names nested under it ({@code /a} for {@code /a/b}):
     * true on etcd (the name's key range holds the nested names' keys, as the Go library's recipes see them) and on
     * ZooKeeper (the nested names' nodes are below the name's, as Curator's recipes see them); false where every name
     * is separate (Redis: each name's keys are in a hash slot of their own, which no script can read beside
     * another's). Never the other way: a holder of {@code /a} does not exclude a claimant of {@code /a/b} on any
     * backend. The default is true.
     *
     * @return whether nested names' holders exclude a claimant of the name above them
     */
    default boolean nestedNamesExclude() {
        return true;
    }

    /**
     * Whether {@code thread} is one of the backend's own threads (lease renewal, session work, I/O), on which no user
     * code and no dependent stage of a future handed to the user may run.
     *
     * @param thread a thread
     * @return true if the thread belongs to the backend
     */
    boolean isBackendThread(Thread thread);

    /**
     * Closes what this backend opened for its own hooks; never an owner, a runner, a client made on it, or a client
     * the caller handed it. The default closes nothing. Idempotent.
     */
    @Override
    default void close() {}
}

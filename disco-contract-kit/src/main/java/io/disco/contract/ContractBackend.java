package io.disco.contract;

import io.disco.client.DiscoBackend;
import io.disco.election.LeadershipRunner;
import java.time.Duration;
import java.util.List;

/**
 * What a backend supplies so that the contract kit can run against it. Kept small and backend-neutral: a
 * backend with leases or sessions (etcd, ZooKeeper) implements each method in a few lines.
 *
 * <p>A <em>name</em> is what a primitive is created on (an etcd key prefix, a ZooKeeper path); the kit makes
 * every name unique per test (see {@link ContractSupport#uniqueName(String)}). A <em>key</em> is a string a
 * grant reports as its {@code key()}.
 *
 * <p>Implementations are shared by every test of a run and must be thread-safe.
 */
public interface ContractBackend {

    /**
     * Opens a new owner: its own session (lease) with the given time to live, independent of every other
     * owner, as another process would be. The kit closes it at the end of the test.
     *
     * @param ttl the lease's time to live; the kit asks for 1 s (callbacks that block for three TTLs), 2 s (a
     *            frozen owner's lease must end quickly) up to 30 s (a lease that must outlive the test unless
     *            ended on purpose)
     * @return the new owner
     */
    ContractOwner newOwner(Duration ttl);

    /**
     * Starts a leadership runner on {@code name} with its own session of the given time to live. The kit
     * closes it.
     *
     * @param name    the election's name
     * @param options the runner's options, as the kit builds them
     * @param ttl     the runner's lease time to live
     * @return the started runner
     */
    LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl);

    /**
     * The backend of a client ({@code io.disco.client.Disco}) whose owners have the given time to live: what
     * the backend's provider hands to {@code Disco.over}. The kit closes the clients it makes.
     *
     * @param ttl each owner's lease time to live
     * @return the client's backend
     */
    DiscoBackend discoBackend(Duration ttl);

    /**
     * A client's backend like {@link #discoBackend(Duration)}, with the given request timeout, whose link to the
     * servers the kit can stall (see {@link StallableClient.Link}): its own connection, so that stalling it stalls
     * no other owner of the test. The kit closes the client it makes on it; the backend closes the link when
     * the run ends.
     *
     * @param ttl            each owner's lease time to live
     * @param requestTimeout how long a request of the client may wait for its answer
     * @return the client's backend and its link
     */
    StallableClient stallableDiscoBackend(Duration ttl, Duration requestTimeout);

    /**
     * A client's backend like {@link #discoBackend(Duration)}, with the given request timeout and owner wait
     * ({@code DiscoBackend.ownerWait()}), whose link to the servers the kit can cut for as long as it likes (its
     * own connection, so that cutting it cuts no other owner of the test), and the endpoints its failures must
     * name. The kit cuts the link before or after making a client on it, and restores it before the test ends;
     * the kit closes the client, the backend closes the link when the run ends.
     *
     * @param ttl            each owner's time to live
     * @param requestTimeout how long a request of the client (and opening an owner) may wait for its answer
     * @param ownerWait      how long an acquisition waits for an owner while the client has none
     * @return the client's backend, its endpoints and its link
     */
    UnreachableClient unreachableDiscoBackend(Duration ttl, Duration requestTimeout, Duration ownerWait);

    /**
     * Lists, with a linearizable read, every key that owners of the primitive on {@code name} hold: the keys of
     * holders and of waiters, and any per-holder key that goes with them (a semaphore's slot claim), sorted.
     * State that belongs to no owner and outlives them (an rwlock's phase marker) is not listed. A grant's
     * {@code key()} is among them while it is held. The kit asserts with it that every way of giving up leaves
     * no key behind.
     *
     * @param name the primitive's name
     * @return the keys, sorted; empty when nobody holds or waits
     * @throws Exception if the backend cannot be read
     */
    List<String> keys(String name) throws Exception;

    /**
     * Deletes one key as an operator would ({@code etcdctl del}, {@code zkCli delete}), behind its owner's back.
     *
     * @param key a key as a grant reports it
     * @throws Exception if the backend cannot be written
     */
    void deleteKey(String key) throws Exception;

    /**
     * The owner a key belongs to (etcd: the lease it is attached to, in hex; ZooKeeper: the session id of an
     * ephemeral node), for tests that check how many owners a client uses.
     *
     * @param key a key as {@link #keys(String)} lists it
     * @return the owner's id, or null when the key is absent or belongs to no owner
     * @throws Exception if the backend cannot be read
     */
    String ownerOf(String key) throws Exception;

    /**
     * Ends the owner {@code key} belongs to from outside, as an operator would ({@code etcdctl lease revoke},
     * a ZooKeeper session expired by the server), without telling the process that holds it.
     *
     * @param key a key as {@link #keys(String)} lists it
     * @throws Exception if the backend cannot be written, or the key belongs to no owner
     */
    void endOwnerOf(String key) throws Exception;

    /**
     * Discards the history of past changes that the backend keeps, if it keeps one (etcd: compacts up to the
     * current revision), so that a waiter or observer that resumes from history has to cope. A backend without
     * such history does nothing.
     *
     * @throws Exception if the backend cannot be reached
     */
    default void compactHistory() throws Exception {}

    /**
     * Whether {@code thread} is one of the backend's own threads (lease renewal, session work, I/O), on which no
     * user code and no dependent stage of a future handed to the user may run.
     *
     * @param thread a thread
     * @return true if the thread belongs to the backend
     */
    boolean isBackendThread(Thread thread);
}

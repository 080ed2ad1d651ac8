package io.disco.examples;

import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.guard.IssuedBound;
import java.time.Duration;
import java.util.List;

/**
 * The coordination service a scenario runs on ({@link EtcdDemoBackend}, {@link ZooKeeperDemoBackend}), through
 * the backend-neutral owner of the client's SPI ({@link DiscoBackend.Owner}: an etcd lease, a ZooKeeper session,
 * with its lock, read/write lock, semaphore and election services), plus what a zombie story needs that no
 * application does: an owner that can be frozen. Closing it closes what it opened (clients, and an embedded
 * server it started); owners are the caller's to close.
 */
public interface DemoBackend extends AutoCloseable {

    /** @return what the scenarios print as where they run, for example {@code etcd: 127.0.0.1:2379} */
    String describe();

    /**
     * Opens an owner with the backend's usual time to live.
     *
     * @return the owner; the caller closes it
     */
    DiscoBackend.Owner open();

    /**
     * Opens an owner whose lease (session) lasts {@code ttl} without renewals: the one a scenario freezes.
     *
     * @param ttl the time to live
     * @return the owner; the caller closes it
     */
    DiscoBackend.Owner open(Duration ttl);

    /**
     * Freezes {@code owner} as a long GC pause would: it stops keeping itself alive and nobody tells it; the
     * backend ends it (and deletes its keys or nodes) within its time to live, and its grants stay in the
     * caller's hands, stale.
     *
     * @param owner an owner this backend opened
     * @return how the freeze goes, for the scenario's log, for example
     *     {@code its keepalive stops, its lease expires within 2 s}
     */
    String freeze(DiscoBackend.Owner owner);

    /** @return the guards' bound: how far the backend has issued tokens */
    IssuedBound issuedBound();

    /**
     * Starts a leadership runner on {@code name} whose every attempt runs on an owner of its own with {@code ttl}.
     *
     * @param name the election's name
     * @param options the runner's options
     * @param ttl each attempt's time to live
     * @return the running runner; the caller closes it
     */
    LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl);

    /**
     * @param primitive what {@code name} is
     * @param name the name
     * @return its holders and waiters (see {@link DiscoBackend.Owner#claimants})
     */
    List<Claimant> claimants(Primitive primitive, String name);

    /**
     * Deletes one key (node) as an operator would.
     *
     * @param key the key
     * @throws Exception if the backend failed
     */
    void deleteKey(String key) throws Exception;

    /** Closes what this backend opened. */
    @Override
    void close();
}

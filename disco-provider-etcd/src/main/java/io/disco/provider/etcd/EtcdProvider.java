package io.disco.provider.etcd;

import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.client.TestableBackend;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Entry point for services that own their session, like the Go library's {@code etcd.NewLock}, {@code etcd.NewRWLock} and {@code etcd.NewElection}:
 * each call opens a new {@link EtcdSession} (one lease and keepalive) that the returned service
 * closes, and revokes, when it is closed. To run many services on one lease, open an
 * {@link EtcdSession} and create them from it instead.
 *
 * <p>The caller owns the jetcd {@link Client}; nothing here closes it.
 */
public final class EtcdProvider {

    private EtcdProvider() {}

    /**
     * A lock service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param name the lock's name, for example {@code /locks/my-resource}
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static LockService newLock(Client client, String name) {
        return newLock(client, name, EtcdOptions.defaults());
    }

    /**
     * A lock service on its own session.
     *
     * @param client the caller's jetcd client
     * @param name the lock's name, for example {@code /locks/my-resource}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static LockService newLock(Client client, String name, EtcdOptions options) {
        return onOwnSession(client, name, options, EtcdLockService::create);
    }

    /**
     * A read/write lock service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param name the read/write lock's name, for example {@code /rwlocks/my-resource}
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static RWLockService newRWLock(Client client, String name) {
        return newRWLock(client, name, EtcdOptions.defaults());
    }

    /**
     * A read/write lock service on its own session.
     *
     * @param client the caller's jetcd client
     * @param name the read/write lock's name, for example {@code /rwlocks/my-resource}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static RWLockService newRWLock(Client client, String name, EtcdOptions options) {
        return onOwnSession(client, name, options, EtcdRWLockService::create);
    }

    /**
     * An election service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param name the election's name, for example {@code /elections/my-service}
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static ElectionService newElection(Client client, String name) {
        return newElection(client, name, EtcdOptions.defaults());
    }

    /**
     * An election service on its own session.
     *
     * @param client the caller's jetcd client
     * @param name the election's name, for example {@code /elections/my-service}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static ElectionService newElection(Client client, String name, EtcdOptions options) {
        return onOwnSession(client, name, options, EtcdElectionService::create);
    }

    /**
     * A semaphore service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param name the semaphore's name
     * @param limit how many may hold a permit at once, at least 1
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names}), {@code limit < 1}, or the name has another limit
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static SemaphoreService newSemaphore(Client client, String name, int limit) {
        return newSemaphore(client, name, limit, EtcdOptions.defaults());
    }

    /**
     * A semaphore service on its own session (see {@link EtcdSession#newSemaphore}).
     *
     * @param client the caller's jetcd client
     * @param name the semaphore's name
     * @param limit how many may hold a permit at once, at least 1
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names}), {@code limit < 1}, or the name has another limit
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static SemaphoreService newSemaphore(Client client, String name, int limit, EtcdOptions options) {
        return onOwnSession(
                client, name, options, (session, p, owns) -> EtcdSemaphoreService.create(session, p, limit, owns));
    }

    /**
     * A leadership runner with the default session options (TTL 30 s): it runs {@code options.task()}
     * while, and only while, it leads the election {@code name}, opening a new session after every
     * loss. Started on return.
     *
     * @param client the caller's jetcd client; the runner never closes it
     * @param name the election's name, shared with {@link #newElection} candidates and Go's
     *     {@code concurrency.Election}
     * @param options the value, task, listener, requeue and backoff
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     */
    public static LeadershipRunner newLeadershipRunner(Client client, String name, LeadershipRunner.Options options) {
        return newLeadershipRunner(client, name, options, EtcdOptions.defaults());
    }

    /**
     * A leadership runner whose sessions use {@code sessionOptions}: the etcd shortcut for
     * {@code LeadershipRunner.start(name, () -> EtcdProvider.newElection(client, name, sessionOptions), options)},
     * one election on a session of its own per attempt.
     *
     * @param client the caller's jetcd client; the runner never closes it
     * @param name the election's name
     * @param options the value, task, listener, requeue and backoff
     * @param sessionOptions each session's TTL, request timeout and callback executor
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} breaks the name rule ({@link io.disco.client.Names})
     */
    public static LeadershipRunner newLeadershipRunner(
            Client client, String name, LeadershipRunner.Options options, EtcdOptions sessionOptions) {
        EtcdService.validName(name);
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(sessionOptions, "sessionOptions");
        return LeadershipRunner.start(name, () -> newElection(client, name, sessionOptions), options);
    }

    /**
     * The client of an application on etcd, with the default session options (TTL 30 s): see
     * {@link #disco(Client, EtcdOptions)}.
     *
     * @param client the caller's jetcd client; never closed by the returned client
     * @return the client; close it at shutdown
     * @throws NullPointerException if {@code client} is null
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static Disco disco(Client client) {
        return disco(client, EtcdOptions.defaults());
    }

    /**
     * The client of an application on etcd: create it once, share it between threads, close it at
     * shutdown (see {@link Disco} for the contract). It holds one {@link EtcdSession} at a time, made
     * with {@code options}, and opens a new one after a loss. Its locks and read/write locks are
     * those of {@link EtcdSession#newLock} and {@link EtcdSession#newRWLock}, with the same keys, so
     * they contend with Go's {@code concurrency.Mutex}, {@code recipes.RWMutex} and {@code etcdctl lock}
     * on the same name. Closing it revokes its lease; it never closes {@code client}.
     *
     * @param client the caller's jetcd client; never closed by the returned client
     * @param options every session's TTL, request timeout, callback executor and listeners
     * @return the client; close it at shutdown
     * @throws NullPointerException if an argument is null
     * @throws io.disco.fencing.DiscoException if etcd does not grant the first lease in time
     */
    public static Disco disco(Client client, EtcdOptions options) {
        return disco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #disco(Client, EtcdOptions)} with the client's backend-neutral options: its observers of acquisitions
     * and holds (for example {@code DiscoObservations.of(observationRegistry)} of disco-micrometer).
     *
     * @param client the caller's jetcd client; never closed by the returned client
     * @param options every session's TTL, request timeout, callback executor and listeners
     * @param discoOptions the client's own options
     * @return the client; close it at shutdown
     * @throws NullPointerException if an argument is null
     * @throws io.disco.fencing.DiscoException if etcd does not grant the first lease in time
     */
    public static Disco disco(Client client, EtcdOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.over(new EtcdDiscoBackend(client, options), discoOptions);
    }

    /**
     * Like {@link #disco(Client, EtcdOptions)}, but for an application that must start while etcd is
     * down: if the first lease cannot be granted (within the request timeout), the client is returned
     * anyway, {@linkplain io.disco.client.DiscoStatus.State#HEALING healing}, and grants its lease in the
     * background as soon as etcd answers (see {@link Disco#healing}). Acquisitions wait for it within
     * their own timeouts; {@link Disco#status()} tells a health check where it stands.
     *
     * @param client the caller's jetcd client; never closed by the returned client
     * @param options every session's TTL, request timeout, callback executor and listeners
     * @return the client, up or healing; close it at shutdown
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(Client client, EtcdOptions options) {
        return healingDisco(client, options, DiscoOptions.defaults());
    }

    /**
     * {@link #healingDisco(Client, EtcdOptions)} with the client's backend-neutral options: its observers of
     * acquisitions and holds.
     *
     * @param client the caller's jetcd client; never closed by the returned client
     * @param options every session's TTL, request timeout, callback executor and listeners
     * @param discoOptions the client's own options
     * @return the client, up or healing; close it at shutdown
     * @throws NullPointerException if an argument is null
     */
    public static Disco healingDisco(Client client, EtcdOptions options, DiscoOptions discoOptions) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(discoOptions, "discoOptions");
        return Disco.healing(new EtcdDiscoBackend(client, options), discoOptions);
    }

    /**
     * The etcd backend of the client ({@link #disco(Client, EtcdOptions)} runs on the same one) with the hooks of
     * tests, demos and fault runs ({@link TestableBackend}): owners of other TTLs, frozen owners (an
     * {@linkplain EtcdSession#orphan() orphaned} session), owners ended from outside (their lease revoked), the keys
     * on a name, a key deleted as an operator would, history compacted. Not for production code. Its owners are
     * {@link EtcdSession}s; every hook's request waits at most the options' request timeout.
     *
     * @param client the caller's jetcd client; never closed by the backend
     * @param options every session's TTL, request timeout, callback executor and listeners
     * @return the backend; closing it closes nothing
     * @throws NullPointerException if an argument is null
     */
    public static TestableBackend testableBackend(Client client, EtcdOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        return new EtcdDiscoBackend(client, options);
    }

    private interface Factory<S> {
        S create(SessionCore session, String name, boolean ownsSession);
    }

    /** Opens a session for one service, which then owns it; the session is closed again if the service cannot be made. */
    private static <S> S onOwnSession(Client client, String name, EtcdOptions options, Factory<S> factory) {
        EtcdService.validName(name);
        EtcdSession session = EtcdSession.open(client, options);
        try {
            return factory.create(session.core(), name, true);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /**
     * Who holds and who waits for {@code name}, read without a session: no lease is granted and nothing
     * is written, so operator tools and read-only etcd users can call it. The same one consistent
     * read, the same order and the same tokens as {@link EtcdSession#claimants} (holders first, then
     * waiters in queue order, by CreateRevision); a snapshot, for people: never take a token from here
     * to fence with.
     *
     * @param client the caller's jetcd client (not closed)
     * @param primitive the kind the name is claimed as (the keys differ per kind)
     * @param name the name, for example {@code /locks/orders}
     * @param timeout how long to wait for etcd's answers
     * @return the claimants, holders first; empty when nobody holds or waits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or {@code timeout} is not positive
     * @throws DiscoException if etcd did not answer within {@code timeout}, or failed
     */
    public static List<Claimant> claimants(Client client, Primitive primitive, String name, Duration timeout) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        return new ClaimantListing(client, timeout).list(primitive, name);
    }

    /**
     * etcd's current revision, read linearizably: the initial token for a guard of a resource that
     * keeps no mark of its own across restarts ({@code Guard.builder().initialToken(...)}). Every
     * fencing token this library hands out is the revision of a write to etcd, so a guard seeded with
     * the current revision rejects every token of an owner whose grant has since ended (its end was a
     * later write) and accepts every grant made from now on. The price: owners that still hold a grant
     * from before may be rejected too (a lock or leadership acquired before the last write, a reader
     * joining a read phase that began before), and acquire again.
     *
     * @param client the caller's jetcd client, connected to the cluster that issues the tokens
     * @param timeout how long to wait for etcd's answer
     * @return the current revision, as a token
     * @throws DiscoException if etcd did not answer within {@code timeout}, or failed
     * @throws IllegalArgumentException if {@code timeout} is not positive
     */
    public static FencingToken currentRevision(Client client, Duration timeout) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        ByteSequence anyKey = ByteSequence.from("disco-revision-probe", StandardCharsets.UTF_8);
        try {
            long revision = client.getKVClient()
                    .get(anyKey, GetOption.builder().withCountOnly(true).build())
                    .get(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .getHeader()
                    .getRevision();
            return FencingToken.of(revision);
        } catch (TimeoutException e) {
            throw new DiscoException(
                    "etcd could not be reached: no answer to a read of the current revision within "
                            + timeout.toMillis() + " ms",
                    e);
        } catch (ExecutionException e) {
            throw new DiscoException(
                    "etcd failed to answer a read of the current revision: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while reading etcd's current revision", e);
        }
    }
}

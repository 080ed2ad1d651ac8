package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.client.FencedLocks;
import io.disco.client.FencedReadWriteLock;
import io.disco.election.ElectionService;
import io.disco.election.LeaderTask;
import io.disco.election.Leadership;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.FencingGrpc;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedLock;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.NullArguments;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No null means "wait for ever" or "use nothing": every public method and constructor of the lock,
 * read/write lock, semaphore, election, fencing and provider modules (the guard module's have their
 * own walk, {@code GuardNullArgumentsTest}) is called by reflection with null in each reference
 * parameter in turn (the others given valid values), on real etcd-backed instances where an instance
 * is needed. Each call must throw a {@link NullPointerException} or {@link IllegalArgumentException}
 * whose message names the parameter, at once (a call still running after 5 s is a failure: it waited),
 * and must change nothing: no key left in etcd, the service still usable. Exceptions' constructors are
 * left out (a null message or cause is theirs to take), and so are parameters documented to take null
 * ({@link #NULLABLE}). The walk itself is {@link NullArguments}.
 *
 * <p>Before, {@code lock(null)}, {@code rLock(null)}, a semaphore's {@code acquire(null)} and
 * {@code campaign(value, null)} waited for ever, and other methods took null silently.
 */
class NullArgumentsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** "Type#method.parameter" whose null the Javadoc gives a meaning to. */
    static final Set<String> NULLABLE = Set.of(
            // null: the header is absent, a MalformedTokenException ("missing X-Fencing-Token header") for the client.
            "FencingHttp#parseHeader.values",
            // null: the token is missing, a MalformedTokenException ("fencing token is missing"), an
            // IllegalArgumentException whose message is made to be returned to the client (FencingTokenTest).
            "FencingToken#parse.text");

    /** What the walk found wrong, one line each. */
    private final List<String> problems = new ArrayList<>();

    private int calls;

    @Test
    void everyPublicMethodRejectsNullNamingTheParameter() throws Exception {
        String base = Etcd.uniquePrefix("nulls");
        try (Client client = Etcd.client(ETCD.cluster());
                EtcdSession session = EtcdSession.open(client, Etcd.ttl(10));
                Disco disco = EtcdProvider.disco(client, Etcd.ttl(10))) {
            Map<Class<?>, Object> samples = samples(client, base);
            // Strings are fresh names: no call may collide with another's service.
            NullArguments nulls =
                    new NullArguments(samples, () -> "/test/nulls/" + UUID.randomUUID()).allowNull(NULLABLE);
            String leasesBefore =
                    ETCD.cluster().etcdctl("lease", "list").lines().findFirst().orElse("");

            // Statics and constructors of the public classes.
            for (Class<?> type : List.of(
                    EtcdProvider.class,
                    EtcdSession.class,
                    EtcdOptions.class,
                    EtcdOptions.Builder.class,
                    EtcdDeadlines.class,
                    FencingToken.class,
                    FencingHttp.class,
                    FencingGrpc.class,
                    Held.class,
                    FencedLocks.class,
                    Grant.class,
                    RWGrant.class,
                    Permit.class,
                    Leadership.class,
                    LeadershipRunner.Options.class,
                    Disco.class)) {
                nulls.walk(type, null);
            }
            // Instances, backed by etcd where the type is a service.
            LockService lock = session.newLock(base + "/lock");
            RWLockService rw = session.newRWLock(base + "/rw");
            SemaphoreService semaphore = session.newSemaphore(base + "/semaphore", 2);
            ElectionService election = session.newElection(base + "/election");
            Map<Class<?>, Object> instances = new HashMap<>();
            instances.put(LockService.class, lock);
            instances.put(RWLockService.class, rw);
            instances.put(SemaphoreService.class, semaphore);
            instances.put(ElectionService.class, election);
            instances.put(EtcdSession.class, session);
            instances.put(EtcdOptions.Builder.class, EtcdOptions.builder());
            instances.put(EtcdOptions.class, Etcd.ttl(10));
            instances.put(FencingToken.class, FencingToken.of(5));
            instances.put(FencedLock.class, FencedLocks.of(lock));
            instances.put(Disco.class, disco);
            instances.put(FencedReadWriteLock.class, disco.readWriteLock(base + "/client-rw"));
            instances.put(Grant.class, samples.get(Grant.class));
            instances.put(Held.class, Held.of((Grant) samples.get(Grant.class), () -> {}));
            instances.put(RWGrant.class, samples.get(RWGrant.class));
            instances.put(Permit.class, samples.get(Permit.class));
            instances.put(Leadership.class, samples.get(Leadership.class));
            instances.put(LeadershipRunner.Options.class, samples.get(LeadershipRunner.Options.class));
            instances.put(LeadershipRunner.Options.Builder.class, LeadershipRunner.Options.builder("v", (LeaderTask)
                    samples.get(LeaderTask.class)));
            for (Map.Entry<Class<?>, Object> e : instances.entrySet()) {
                nulls.walk(e.getKey(), e.getValue());
            }

            problems.addAll(nulls.problems());
            calls = nulls.calls();

            // Nothing changed: no key, no lease, every service usable.
            List<String> left = Etcd.keysUnder(client, base);
            if (!left.isEmpty()) {
                problems.add("keys left behind: " + left);
            }
            String leasesAfter =
                    ETCD.cluster().etcdctl("lease", "list").lines().findFirst().orElse("");
            if (!leasesAfter.equals(leasesBefore)) {
                problems.add("leases left behind: before '" + leasesBefore + "', after '" + leasesAfter + "'");
            }
            lock.held().ifPresent(g -> problems.add("the lock is held after the walk: " + g));
            rw.held().ifPresent(g -> problems.add("the read/write lock is held after the walk: " + g));
            semaphore.held().ifPresent(g -> problems.add("the semaphore is held after the walk: " + g));
            election.held().ifPresent(g -> problems.add("the election is held after the walk: " + g));
            if (!problems.isEmpty()) {
                report();
            }
            Duration t = Duration.ofSeconds(10);
            lock.lock(t);
            lock.unlock();
            rw.rLock(t);
            rw.rUnlock();
            semaphore.acquire(t);
            semaphore.release();
            election.campaign("v", t);
            election.resign();
            assertTrue(
                    session.err().isEmpty()
                            && lock.err().isEmpty()
                            && rw.err().isEmpty()
                            && semaphore.err().isEmpty()
                            && election.err().isEmpty(),
                    "nothing lost");
            assertEquals(List.of(), Etcd.keysUnder(client, base));
        }
        report();
        assertTrue(calls > 50, "the walk reached the API: " + calls + " calls");
        assertEquals(List.of(), problems);
    }

    private void report() {
        System.out.println(calls + " calls with a null argument; " + problems.size() + " problems");
        assertEquals(
                List.of(),
                problems,
                calls + " calls with a null argument; " + problems.size() + " problems:\n  "
                        + String.join("\n  ", problems) + "\n");
    }

    /** Sample values by parameter type; strings are fresh names under {@code base}. */
    private static Map<Class<?>, Object> samples(Client client, String base) {
        Map<Class<?>, Object> s = new HashMap<>();
        FencingToken token = FencingToken.of(7);
        s.put(Duration.class, Duration.ofSeconds(1));
        s.put(FencingToken.class, token);
        s.put(Client.class, client);
        s.put(EtcdOptions.class, Etcd.ttl(10));
        s.put(DiscoOptions.class, DiscoOptions.defaults());
        s.put(Executor.class, (Executor) Runnable::run);
        s.put(TimeUnit.class, TimeUnit.SECONDS);
        s.put(HttpRequest.Builder.class, HttpRequest.newBuilder(URI.create("http://localhost/")));
        s.put(Grant.class, new Grant(base + "/g", token));
        s.put(RWGrant.class, new RWGrant(base + "/rg", RWGrant.Mode.READ, token));
        s.put(RWGrant.Mode.class, RWGrant.Mode.READ);
        s.put(Permit.class, new Permit(base + "/p", base + "/p/1", 0, token));
        s.put(CharSequence.class, "7");
        s.put(List.class, List.of("7"));
        s.put(io.grpc.Metadata.class, new io.grpc.Metadata());
        s.put(Leadership.class, new Leadership(base + "/l", "v", token));
        LeaderTask task = term -> {};
        s.put(LeaderTask.class, task);
        s.put(LeadershipRunner.Options.class, LeadershipRunner.Options.of("v", task));
        s.put(Object.class, "v");
        return s;
    }
}

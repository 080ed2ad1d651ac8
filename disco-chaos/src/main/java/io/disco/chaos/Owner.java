package io.disco.chaos;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * An owner process: runs one {@link Workload}'s loop against the resource, reaching etcd or ZooKeeper
 * ({@link OwnerBackend}) only through its own TCP proxies, and prints one line per event, {@code <nanos> <owner> <EVENT> <args>}:
 * <ul>
 *   <li>{@code GRANT <token> <key> <mode>}: a grant of the register {@code key}, mode {@code W}
 *       (exclusive) or {@code R} (shared); {@code TIMEOUT} when an acquisition timed out;</li>
 *   <li>{@code READ <token> <status> <value>}, {@code WRITE <token> <status>}: calls to the resource;</li>
 *   <li>{@code RELEASING <token>} before the release call (the hold ends there: the next grant may come
 *       before the call returns), {@code RELEASE <token>} after it; {@code CLOSING} before its service is
 *       closed, which gives up any grant it still holds (after an error, say);</li>
 *   <li>{@code DONE <lease, session or token>} when the loss signal fired, {@code LOST <why>} when a call
 *       reported the loss, {@code ERROR <what>}, {@code EXIT} on SIGTERM (after closing, so that no key
 *       is left), and workload-specific lines;</li>
 *   <li>{@code CLOCK <millis>}: its wall clock, every second.</li>
 * </ul>
 * The {@link ClientLockWorkload}'s threads print their events under an owner of their own, {@code <owner>.t<j>}
 * ({@link #say(String, String)}), and a grant with the hold's identity ({@code GRANT <token> <key> W <owner>.t<j>.h<n>}),
 * which is also the owner its resource calls name.
 * Arguments: workload, owner id, etcd endpoints (its proxies, comma-separated) or {@code zookeeper:} and a
 * connect string (its proxies), resource base URI,
 * name, TTL seconds, milliseconds of work between a read and the write that follows it, (optional, default
 * {@link #REQUEST_TIMEOUT}) the request timeout in milliseconds, and (optional, default 1) how many owner processes
 * the run has ({@link #owners}: the {@link BarrierWorkload}'s double barrier waits for all of them).
 */
final class Owner {

    /** The register of the workloads with one resource; a semaphore's are its permits' guard keys. */
    static final String MAIN = "main";
    /** Every blocking call of an owner is bounded; an acquisition by this. */
    static final Duration ACQUIRE = Duration.ofSeconds(10);
    /**
     * How long an owner waits for one answer of etcd or ZooKeeper (its sessions' request timeout, and jetcd's
     * deadline per request), by default: half the run's 2 s TTL, so that a freeze of every member can outlast it
     * and still end before the TTL ({@link Nemesis#FREEZE_ALL}).
     */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);

    private static final Duration CALL = Duration.ofSeconds(5);

    final String id;
    final String name;
    /** Where its sessions are opened ({@link OwnerBackend#of}). */
    final TestableBackend backend;
    /** Its sessions' TTL: the lease TTL (etcd) or session timeout (ZooKeeper). */
    final Duration ttl;

    /** How many owner processes the run has ({@code o0} to {@code o<owners - 1>}). */
    final int owners;

    final Random random = new Random();
    private final URI resource;
    private final long workMillis;
    /** No connect timeout: the JDK measures it on the wall clock; each call's bound covers connecting. */
    private final HttpClient http = HttpClient.newHttpClient();

    private final AtomicReference<AutoCloseable> closeOnExit = new AtomicReference<>();

    private Owner(String[] args) {
        id = args[1];
        ttl = Duration.ofSeconds(Long.parseLong(args[5]));
        backend = OwnerBackend.of(
                args[2], ttl, args.length > 7 ? Duration.ofMillis(Long.parseLong(args[7])) : REQUEST_TIMEOUT);
        resource = URI.create(args[3]);
        name = args[4];
        workMillis = Long.parseLong(args[6]);
        owners = args.length > 8 ? Integer.parseInt(args[8]) : 1;
    }

    public static void main(String[] args) throws Exception {
        Owner owner = new Owner(args);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            AutoCloseable c = owner.closeOnExit.get();
            if (c != null) {
                // the close gives the grant up: said before it, as a release says RELEASING, since the next owner
                // may be granted before the close returns (an EXIT said after it ended the hold too late)
                owner.say("CLOSING");
                try {
                    c.close();
                } catch (Exception e) {
                    owner.say("ERROR close " + e);
                }
            }
            owner.say("EXIT");
        }));
        Thread clock = new Thread(owner::tellClock, "chaos-owner-clock");
        clock.setDaemon(true);
        clock.start();
        Workload.named(args[0]).own(owner);
    }

    /**
     * Declared after a service in its try-with-resources, so that it closes first: says {@code CLOSING}
     * before the service's close gives up its grant.
     */
    private AutoCloseable closing() {
        return () -> say("CLOSING");
    }

    void say(String event) {
        say(id, event);
    }

    /** Prints an event of {@code who}: this owner, or one of its threads ({@code <id>.t<j>}). */
    void say(String who, String event) {
        synchronized (System.out) {
            System.out.println(System.nanoTime() + " " + who + " " + event.replace('\n', ' '));
            System.out.flush();
        }
    }

    /** Prints {@code CLOCK <wall-clock millis>} every second, so the run can see its wall clock stepped. */
    private void tellClock() {
        while (true) {
            say("CLOCK " + System.currentTimeMillis());
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    void granted(FencingToken token, String key, String mode) {
        say("GRANT " + token.value() + " " + key + " " + mode);
    }

    /** One acquisition bounded by a timeout. */
    interface Acquisition<T> {
        T acquire(Duration timeout) throws Exception;
    }

    /** @return the grant of {@code a} bounded by {@link #ACQUIRE}, or null (said {@code TIMEOUT}) when it timed out */
    <T> T acquire(Acquisition<T> a) throws Exception {
        try {
            return a.acquire(ACQUIRE);
        } catch (TimeoutException e) {
            say("TIMEOUT");
            return null;
        }
    }

    /** Releases the grant of {@code token}: the hold ends at {@code RELEASING}, before the call. */
    void release(FencingToken token, Runnable release) {
        say("RELEASING " + token.value());
        release.run();
        say("RELEASE " + token.value());
    }

    /** What a hold does with its grant between {@code GRANT} and {@code RELEASING}. */
    interface CriticalSection<G> {
        void run(G grant) throws Exception;
    }

    /**
     * One hold of a workload on one primitive: acquires with {@code a} ({@link #acquire}: a timeout is said
     * {@code TIMEOUT} and ends the round), says {@code GRANT} of the grant's register ({@code key} of the grant) in
     * {@code mode}, runs {@code section}, and releases ({@link #release}). A section that throws ends the session's
     * loop without the release, as a failed call does ({@link #sessions}: the service's close gives the grant up).
     */
    <G extends Fenced> void hold(
            Acquisition<G> a,
            Function<? super G, String> key,
            String mode,
            CriticalSection<G> section,
            Runnable release)
            throws Exception {
        G grant = acquire(a);
        if (grant == null) {
            return;
        }
        granted(grant.token(), key.apply(grant), mode);
        section.run(grant);
        release(grant.token(), release);
    }

    /** What SIGTERM closes: the current session, or a runner. */
    void closeOnExit(AutoCloseable c) {
        closeOnExit.set(c);
    }

    /** One session's part of a workload: runs until the session is lost (or throws). */
    interface SessionBody {
        void run(DiscoBackend.Owner session) throws Exception;
    }

    /**
     * Runs {@code body} on one session after another: a lost session (its loss seen as {@code DONE},
     * and as {@code LOST} from the call that reported it) is replaced by a new one.
     */
    void sessions(SessionBody body) throws InterruptedException {
        while (true) {
            DiscoBackend.Owner session;
            try {
                session = backend.open();
            } catch (RuntimeException e) {
                say("ERROR session " + e.getMessage());
                Thread.sleep(200); // the pace of retries while the backend cannot be reached
                continue;
            }
            closeOnExit(session);
            String lease = session.id();
            session.done().thenRun(() -> say("DONE " + lease));
            try {
                body.run(session);
            } catch (DiscoException e) {
                // a *LostException: the loss reported by a call; any other: etcd failed
                say((e.getClass().getSimpleName().endsWith("LostException") ? "LOST " : "ERROR ")
                        + e.getClass().getSimpleName() + " " + e.getMessage());
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                // IllegalStateException: the session was lost before the service was made; I/O to the resource
                say("ERROR " + e.getClass().getSimpleName() + " " + e.getMessage());
            }
            try {
                session.close();
            } catch (Exception e) {
                say("ERROR close " + e);
            }
        }
    }

    /** Opens a primitive's service on one session, as {@code session.newLock(name)} does. */
    interface ServiceOpener<S extends AutoCloseable> {
        S open(DiscoBackend.Owner session) throws Exception;
    }

    /** One round of a workload on its primitive's service: one hold, or one acquisition that timed out. */
    interface Round<S> {
        void run(S service) throws Exception;
    }

    /**
     * The loop of a workload on one primitive: on each session ({@link #sessions}) opens the service with
     * {@code open}, and runs {@code round} after round on it while the session lives. {@code CLOSING} is said
     * before the service's close gives up any grant it still holds.
     */
    <S extends AutoCloseable> void rounds(ServiceOpener<S> open, Round<S> round) throws InterruptedException {
        sessions(session -> {
            try (S service = open.open(session);
                    AutoCloseable closing = closing()) {
                while (alive(session)) {
                    round.run(service);
                }
            }
        });
    }

    /** @return whether {@code session} still holds its lease */
    static boolean alive(DiscoBackend.Owner session) {
        return !session.done().toCompletableFuture().isDone();
    }

    /**
     * The critical section of a writer: reads the register, works, writes the value read plus one,
     * each with {@code token}.
     *
     * @return whether both calls were accepted
     */
    boolean increment(String key, FencingToken token) throws Exception {
        return increment(id, id, key, token);
    }

    /**
     * {@link #increment(String, FencingToken)} by {@code who} (this owner or one of its threads), naming
     * {@code holder} to the resource (the hold's identity, so that the resource's history tells two holds of one
     * process apart).
     */
    boolean increment(String who, String holder, String key, FencingToken token) throws Exception {
        HttpResponse<String> read = read(who, holder, key, token);
        if (read.statusCode() != 200) {
            return false;
        }
        work();
        long v = Long.parseLong(read.body().strip());
        HttpResponse<String> write = call(
                "/write?key=" + encode(key) + "&owner=" + encode(holder) + "&expect=" + v + "&value=" + (v + 1),
                token,
                true);
        say(who, "WRITE " + token.value() + " " + write.statusCode());
        return write.statusCode() == 200;
    }

    HttpResponse<String> read(String key, FencingToken token) throws Exception {
        return read(id, id, key, token);
    }

    private HttpResponse<String> read(String who, String holder, String key, FencingToken token) throws Exception {
        HttpResponse<String> read = call("/read?key=" + encode(key) + "&owner=" + encode(holder), token, false);
        say(
                who,
                "READ " + token.value() + " " + read.statusCode() + " "
                        + read.body().strip());
        return read;
    }

    /** The owner's work between its read and its write. */
    void work() throws InterruptedException {
        Thread.sleep(workMillis);
    }

    /**
     * One call to the resource, bounded on the monotonic clock: the JDK {@code HttpClient}'s own request
     * timeout is measured on the wall clock, which the nemesis steps.
     */
    private HttpResponse<String> call(String pathAndQuery, FencingToken token, boolean write) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(resource.resolve(pathAndQuery));
        FencingHttp.inject(b, token);
        b = write ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        CompletableFuture<HttpResponse<String>> f = http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
        try {
            return f.get(CALL.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new HttpTimeoutException("no answer from the resource within " + CALL);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        } finally {
            f.cancel(true);
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}

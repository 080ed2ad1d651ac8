package io.disco.shedlock;

import io.disco.client.Disco;
import io.disco.client.Names;
import io.disco.fencing.DiscoException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;

/**
 * ShedLock's {@link net.javacrumbs.shedlock.core.LockProvider} over a disco client: a drop-in replacement
 * for ShedLock's etcd, Redis or JDBC provider (one bean) whose locks are kept alive by the client's lease
 * instead of a guessed time to live, and whose every run has a fencing token ({@link SchedulerLockToken}).
 *
 * <pre>{@code
 * @Configuration
 * @EnableScheduling
 * @EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
 * class Scheduling {
 *     @Bean
 *     DiscoLockProvider lockProvider(Disco disco) {
 *         return new DiscoLockProvider(disco, "/myapp/shedlock");
 *     }
 * }
 *
 * @Scheduled(fixedRate = 60_000)
 * @SchedulerLock(name = "sync", lockAtMostFor = "PT5M", lockAtLeastFor = "PT30S")
 * void sync() {
 *     store.write(batch(), SchedulerLockToken.current());
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Names.</b> ShedLock's lock {@code name} is the client's lock {@code prefix + "/" + name}, with
 *       {@code '%'} and {@code '/'} in the name written {@code %25} and {@code %2F}, and any character the name
 *       rule refuses escaped too ({@link io.disco.client.Names#segment(String)}): every ShedLock name works.</li>
 *   <li><b>Lock.</b> {@link #lock} acquires only if nobody holds the name (another instance, or another
 *       run of this one): otherwise it returns empty at once and ShedLock skips the run. It claims with one
 *       request to the backend; a failure of the backend is thrown as ShedLock's {@link LockException}.</li>
 *   <li><b>lockAtMostFor</b> is a maximum hold, not a time to live: while the run lasts less, the client's
 *       lease keeps the lock (a dead or cut-off instance loses it after the lease's TTL, not after
 *       lockAtMostFor); when the run lasts longer, the lock is released at lockAtMostFor (counted from the
 *       call of {@link #lock}) by a timer of the provider's, and the run's token becomes stale:
 *       {@link SchedulerLockToken#current()} throws, and a fenced resource rejects the run's writes once the
 *       next run has written.</li>
 *   <li><b>lockAtLeastFor.</b> An unlock before lockAtLeastFor (counted from the call of {@link #lock})
 *       returns at once and keeps the lock until then; the provider releases it at that moment. An unlock
 *       after it releases before returning.</li>
 *   <li><b>Extend.</b> {@link SimpleLock#extend} works from any thread, so {@code LockExtender} and
 *       {@code KeepAliveLockProvider} work: lockAtMostFor and lockAtLeastFor are counted afresh from the
 *       extension, the token is kept, and a hold that expired, was lost or was unlocked is not extended
 *       (empty).</li>
 *   <li><b>Lease loss.</b> When the client's lease is lost during a run, the run's hold is lost (logged):
 *       its token is stale, and the next run (here or elsewhere) claims afresh with a new token.</li>
 *   <li><b>Threads.</b> A held lock occupies one thread of the provider's (a daemon, from a pool, which
 *       runs no user code) from the claim until the release, lockAtLeastFor included; one more thread runs
 *       the timers. ShedLock calls {@link #lock} and unlock on the task's thread, and that is where
 *       {@link SchedulerLockToken} finds the run.</li>
 * </ul>
 *
 * <h2>Who closes what</h2>
 * {@link #close()} (Spring calls it when the context closes) releases every lock the provider holds or keeps
 * and stops its threads; it never closes the {@link Disco} client, which the application owns.
 */
public final class DiscoLockProvider implements ExtensibleLockProvider, AutoCloseable {

    /** The prefix of {@link #DiscoLockProvider(Disco)}. */
    public static final String DEFAULT_PREFIX = "/shedlock";

    private static final AtomicInteger PROVIDERS = new AtomicInteger();

    private final Disco disco;
    private final String prefix;
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService holders;
    private final Set<ShedHold> holds = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * A provider whose locks are named under {@link #DEFAULT_PREFIX}.
     *
     * @param disco the client to lock through; the provider never closes it
     * @throws NullPointerException if {@code disco} is null
     */
    public DiscoLockProvider(Disco disco) {
        this(disco, DEFAULT_PREFIX);
    }

    /**
     * A provider whose locks are named under {@code prefix}.
     *
     * @param disco the client to lock through; the provider never closes it
     * @param prefix the names' prefix, such as {@code /myapp/shedlock}: a disco name ({@link Names}), used by
     *               nothing else of the application
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code prefix} is not a disco name
     */
    public DiscoLockProvider(Disco disco, String prefix) {
        this.disco = Objects.requireNonNull(disco, "disco");
        this.prefix = Names.check(prefix, "prefix");
        int id = PROVIDERS.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, daemons("disco-shedlock-" + id + "-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.holders = new ThreadPoolExecutor(
                0,
                Integer.MAX_VALUE,
                30,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                daemons("disco-shedlock-" + id + "-holder"));
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Acquires {@code configuration}'s lock if nobody holds it.
     *
     * @param configuration ShedLock's configuration of the run
     * @return the lock, or empty if another instance or run holds it
     * @throws NullPointerException if {@code configuration} is null
     * @throws IllegalStateException if the provider or the client is closed
     * @throws LockException if the backend failed, or the calling thread was interrupted while the claim was
     *         made (its interrupt status is kept, and nothing is held)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Objects.requireNonNull(configuration, "configuration");
        long start = System.nanoTime();
        if (closed.get()) {
            throw new IllegalStateException("this DiscoLockProvider is closed");
        }
        String name = configuration.getName();
        ShedHold hold = new ShedHold(
                name,
                disco.lock(prefix + "/" + escape(name)),
                timer,
                start,
                configuration.getLockAtMostFor(),
                configuration.getLockAtLeastFor());
        holds.add(hold);
        hold.released().whenComplete((v, e) -> holds.remove(hold));
        holders.execute(hold::hold);
        boolean acquired;
        try {
            acquired = hold.awaitAcquired();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while locking '" + name + "': not locked", e);
        } catch (DiscoException e) {
            throw new LockException("could not lock '" + name + "': " + e.getMessage(), e);
        }
        if (!acquired || hold.state() == ShedHold.State.RELEASED) { // released: the provider closed meanwhile
            return Optional.empty();
        }
        RunHolds.enter(hold);
        return Optional.of(new ShedLockView(configuration, hold));
    }

    /** The name as one segment of a disco name: never nested, never refused ({@link Names#segment(String)}). */
    static String escape(String name) {
        return Names.segment(name);
    }

    /**
     * Releases every lock this provider holds or keeps (a run still going on loses its lock: its token is
     * stale), and stops its threads. Never closes the client. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (ShedHold hold : holds) {
            hold.releaseNow();
        }
        for (ShedHold hold : holds) {
            try {
                hold.released().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // its lease ends it; closing goes on
            }
        }
        timer.shutdownNow();
        holders.shutdown();
    }

    @Override
    public String toString() {
        return "DiscoLockProvider['" + prefix + "' on " + disco + "]";
    }
}

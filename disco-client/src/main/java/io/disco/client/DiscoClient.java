package io.disco.client;

import io.disco.barrier.Barrier;
import io.disco.barrier.DoubleBarrier;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The backend-neutral {@link Disco}: it wires the client's parts together and hands out handles. Its duties:
 * check names, make the handles (each gets the {@link Entries} of its primitive, never this class), make election
 * candidates and leadership runners (and signal the runners when the client stops), list claimants, report the
 * status and the holdings, and close. The parts: the owner of the moment ({@link CurrentOwner}, which the entries
 * get as a supplier), the names in use ({@link Registry}, swept on the owner's threads), the thread-owned handles
 * ({@link ClientLock}, {@link ClientReadWriteLock}, {@link ClientSemaphore}) over their entries, which claim with
 * {@link SelfHealingClaim}.
 *
 * <p>Where the rest of the client lives:
 * <ul>
 *   <li>Elections ({@link ClientElection}): a candidate is the service of the owner of the moment, one
 *       per name ({@link ElectionEntry}); a runner's factory is {@link #election(String)}, so it campaigns
 *       again on the new owner after a loss.</li>
 *   <li>Holder metadata: the backend puts it in the key's value; the client passes its settings to the
 *       backend when it is created; {@link #claimants} asks the current (or the lost) owner's
 *       {@code Owner.claimants}.</li>
 *   <li>A maximum hold time and asynchronous holds live in the lock's queue ({@link QueuedFencedLock}:
 *       {@code withMaxHold}, {@code lockAsync}); {@link ClientLock} hands the view through.</li>
 *   <li>Observers ({@link DiscoOptions#observers()}): the handles start each acquisition's {@link AttemptWatch} on the
 *       calling thread and the grant's holder ends its {@link HoldWatch}; without observers both are the inert
 *       {@code OFF} ones ({@link Observers}).</li>
 *   <li>Virtual threads: the client waits on {@code java.util.concurrent} locks and futures only, never in a
 *       {@code synchronized} block.</li>
 * </ul>
 */
final class DiscoClient implements Disco {

    private final DiscoBackend backend;
    /** The names in use; initialised before {@link #owner}, whose stop may sweep it. */
    private final Registry registry = new Registry();
    /** Guards {@link #runners} and {@link #runnersStopped}. */
    private final ReentrantLock runnersLock = new ReentrantLock();
    /** The leadership runners started through this client, signalled when it stops. */
    private final List<LeadershipRunner> runners = new ArrayList<>();

    private boolean runnersStopped;
    private final CurrentOwner owner;
    private final Entries<LockEntry> locks;
    private final Entries<RWEntry> readWriteLocks;
    private final Entries<ElectionEntry> elections;
    /** The observers of every acquisition and hold ({@link DiscoOptions#observers()}); {@link Observers#NONE} by default. */
    private final Observers observers;

    /**
     * @param failFast whether a first owner that cannot be opened fails the constructor; if not, the
     *     client starts healing (see {@link Disco#healing})
     */
    DiscoClient(DiscoBackend backend, DiscoOptions options, boolean failFast) {
        this.backend = backend;
        this.observers = Observers.of(options);
        this.owner = new CurrentOwner(backend, failFast, this::stopped);
        long sweep = Registry.LINGER_NANOS / 2;
        owner.repeat(() -> registry.sweep(false), sweep);
        String client = owner.toString();
        this.locks = new Entries<>(
                registry,
                Primitive.LOCK,
                LockEntry.class,
                n -> new LockEntry(n, owner::owner, registry),
                owner::requireOpen,
                client,
                observers);
        this.readWriteLocks = new Entries<>(
                registry,
                Primitive.RWLOCK,
                RWEntry.class,
                n -> new RWEntry(n, owner::owner, registry),
                owner::requireOpen,
                client,
                observers);
        this.elections = new Entries<>(
                registry,
                Primitive.ELECTION,
                ElectionEntry.class,
                n -> new ElectionEntry(n, owner::owner, registry),
                owner::requireOpen,
                client,
                observers);
    }

    /** The client stopped (closed, or its backend's client closed first): signal the runners, drop the idle names. */
    private void stopped() {
        List<LeadershipRunner> started;
        runnersLock.lock();
        try {
            runnersStopped = true;
            started = new ArrayList<>(runners);
            runners.clear();
        } finally {
            runnersLock.unlock();
        }
        for (LeadershipRunner r : started) {
            r.close(Duration.ZERO); // signal only: the owner's end ends their leadership anyway
        }
        registry.sweep(true);
    }

    @Override
    public FencedLock lock(String name) {
        owner.requireOpen();
        return new ClientLock(Names.check(name), locks);
    }

    @Override
    public FencedReadWriteLock readWriteLock(String name) {
        owner.requireOpen();
        return new ClientReadWriteLock(Names.check(name), readWriteLocks);
    }

    @Override
    public FencedSemaphore semaphore(String name, int permits) {
        owner.requireOpen();
        String checked = Names.check(name);
        Entries<SemaphoreEntry> semaphores = new Entries<>(
                registry,
                Primitive.SEMAPHORE,
                SemaphoreEntry.class,
                n -> new SemaphoreEntry(n, permits, owner::owner, registry),
                owner::requireOpen,
                owner.toString(),
                observers);
        return new ClientSemaphore(checked, permits, semaphores);
    }

    @Override
    public Barrier barrier(String name) {
        owner.requireOpen();
        return new ClientBarrier(Names.check(name), owner);
    }

    @Override
    public DoubleBarrier doubleBarrier(String name, int participants) {
        owner.requireOpen();
        String checked = Names.check(name);
        if (participants < 1) {
            throw new IllegalArgumentException(
                    "participants must be at least 1, got " + participants + " (double barrier '" + name + "')");
        }
        return new ClientDoubleBarrier(checked, participants, owner);
    }

    @Override
    public ElectionService election(String name) {
        owner.requireOpen();
        Names.check(name);
        CompletableFuture<DiscoBackend.Owner> pending = owner.owner();
        if (!pending.isDone()) {
            throw new DiscoException(
                    "the client has no owner in " + backend.describe() + " right now (it is opening a new"
                            + " one after a loss); no candidate for election '" + name + "' yet, try again");
        }
        DiscoBackend.Owner o;
        try {
            o = pending.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
        ElectionEntry e = elections.join(name);
        if (!e.candidate.compareAndSet(false, true)) {
            elections.leave(e);
            throw new IllegalStateException("this client already has a candidate in election '" + name + "' (an open"
                    + " election(name) or a leadership runner's campaign): its key would be the same; close it first");
        }
        try {
            ElectionService service = o.newElection(name);
            e.current = service;
            return new ClientElection(service, e, elections, observers);
        } catch (RuntimeException | Error failure) {
            e.candidate.set(false);
            elections.leave(e);
            throw failure;
        }
    }

    @Override
    public LeadershipRunner leadershipRunner(String name, LeadershipRunner.Options options) {
        Names.check(name);
        Objects.requireNonNull(options, "options");
        owner.requireOpen();
        ElectionEntry e = elections.join(name);
        try {
            if (e.candidate.get()) {
                throw new IllegalStateException(
                        "this client already has a candidate in election '" + name + "' (an open"
                                + " election(name) or another leadership runner): its key would be the same; close it first");
            }
        } finally {
            elections.leave(e); // only a check of the name here: each attempt of the runner joins it again
        }
        LeadershipRunner runner = LeadershipRunner.start(name, () -> election(name), options);
        runnersLock.lock();
        try {
            if (!runnersStopped) {
                runners.removeIf(r -> !r.isRunning());
                runners.add(runner);
                return runner;
            }
        } finally {
            runnersLock.unlock();
        }
        runner.close(Duration.ZERO); // closed meanwhile
        throw owner.closedException();
    }

    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        Objects.requireNonNull(primitive, "primitive");
        Names.check(name);
        return owner.forReading().claimants(primitive, name);
    }

    @Override
    public DiscoStatus status() {
        return owner.status(registry::size);
    }

    @Override
    public List<Holding> holdings() {
        if (owner.isClosed()) {
            return List.of();
        }
        List<Holding> out = new ArrayList<>();
        for (Entry<?> e : registry.inUse()) {
            out.addAll(e.holdings());
        }
        return List.copyOf(out);
    }

    /**
     * @return how many names the client keeps anything for (in use, lingering, or a lost service closing), also
     *     once closed; the contract kit reads it reflectively ({@code ClientContract.namesInUse})
     */
    int namesInUse() {
        return registry.size();
    }

    @Override
    public void close() {
        owner.close();
    }

    @Override
    public String toString() {
        return owner.toString();
    }
}

package io.disco.provider.etcd;

import io.etcd.jetcd.Watch;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Opens watches and notices those whose etcd member stopped answering. A member that froze
 * (SIGSTOP, a stalled process) keeps its TCP connection open: the watch neither errors nor delivers,
 * and a require-leader watch does not help, since the member cannot even say that it lost its
 * leader. So a watch must confirm its creation within its patience (its owner asks for the created
 * notification), and a member none of whose watches has delivered anything for a watch's
 * {@code silence} is asked for a progress report (one small message on one of its watch streams;
 * etcd answers it from memory, without raft or disk), which must come within the least patience of
 * the watches waiting on it; once answered, the next silence sends the next one. A watch's patience
 * is the probe timeout, or its silence if that is longer: a watch that only guards against a rare
 * event need not be moved off a member that is merely busy. A watch that misses either is declared
 * stuck: {@code onStuck} runs once, and the watch is closed (its owner opens a new one: a new watch
 * is a new stream, which the client's round-robin balancing puts on another member).
 *
 * <p>Liveness is judged per member, not per watch: a member that answers on one watch stream answers
 * on the others (they share its process and, in gRPC, its connection), and a member that froze
 * answers on none. Every response names its member; a probe that times out makes every watch on
 * that member not heard from since the probe stuck at once. So a session with 10,000 quiet watches
 * sends one progress request per member per silence, not one per watch.
 *
 * <p>At most {@value #MAX_OPENING} watches await their created notification at once; more wait,
 * unsent, and are opened as earlier ones are confirmed. A burst of creations (thousands of services
 * acquiring at once) would otherwise queue behind each other at the member, miss the probe timeout
 * and be moved, adding to the queue they were stuck in.
 *
 * <p>The silence is chosen per watch: short where a hand-over waits on the watch, long where it only
 * guards against a rare event. One ticker per instance, on the owner's executor, runs only while
 * some watch is open. Thread-safe: jetcd delivers on its event loop, the ticker runs on the
 * executor.
 */
final class WatchLiveness {

    /** Watches at most that have been sent and not yet confirmed; the others wait, unsent. */
    static final int MAX_OPENING = 64;

    private final ScheduledExecutorService exec;
    private final long probeTimeoutNanos;
    /** The watches sent and not yet closed. */
    private final Set<Probed> watches = ConcurrentHashMap.newKeySet();
    /** The etcd members that answered a watch, by member id. */
    private final Map<Long, Member> members = new ConcurrentHashMap<>();
    /** Guards the fields below and the members' probes. */
    private final Object lock = new Object();

    private final ArrayDeque<Probed> unsent = new ArrayDeque<>();
    private int opening;
    private ScheduledFuture<?> ticker;

    WatchLiveness(ScheduledExecutorService exec, long probeTimeoutNanos) {
        this.exec = exec;
        this.probeTimeoutNanos = probeTimeoutNanos;
    }

    /**
     * Opens a watch under observation: {@code open} is called with the listener to hand to jetcd, at
     * once or (when {@value #MAX_OPENING} watches await their creation) later, on the executor. The
     * returned watcher closes it whether it was sent yet or not; closing, or being found stuck, ends
     * with {@code listener.onCompleted()}, as closing a jetcd watcher does. {@code onStuck} runs on
     * the executor, before the watch is closed.
     */
    Watch.Watcher open(
            Function<Watch.Listener, Watch.Watcher> open,
            Watch.Listener listener,
            long silenceNanos,
            Runnable onStuck) {
        Probed p = new Probed(open, listener, silenceNanos, onStuck);
        boolean now;
        synchronized (lock) {
            now = opening < MAX_OPENING;
            if (now) {
                opening++;
                p.slot = true;
            } else {
                unsent.add(p);
            }
        }
        if (now) {
            p.send();
        }
        return p;
    }

    /** Sends unsent watches while fewer than {@value #MAX_OPENING} await their creation. */
    private void sendMore() {
        List<Probed> next = new ArrayList<>();
        synchronized (lock) {
            while (opening < MAX_OPENING && !unsent.isEmpty()) {
                Probed p = unsent.poll();
                opening++;
                p.slot = true;
                next.add(p);
            }
        }
        for (Probed p : next) {
            try {
                exec.execute(p::send);
            } catch (RejectedExecutionException e) {
                p.send(); // shut down: it fails or closes at once
            }
        }
    }

    private void tick() {
        long now = System.nanoTime();
        List<Probed> probe = new ArrayList<>();
        List<Probed> stuck = new ArrayList<>();
        synchronized (lock) {
            for (Member m : members.values()) {
                if (m.prober == null) {
                    continue;
                }
                if (m.heardAt - m.probedAt >= 0) {
                    m.prober = null; // answered (or heard on another watch): the next silence sends the next probe
                } else if (now - m.probedAt >= m.patienceNanos) {
                    m.prober = null;
                    m.failed = true;
                    m.failedProbeAt = m.probedAt;
                }
            }
            for (Probed p : watches) {
                Member m = p.member;
                if (m == null) {
                    if (now - p.sentAt >= p.patienceNanos) {
                        stuck.add(p); // not even created
                    }
                    continue;
                }
                long heard = p.heardAt - m.heardAt < 0 ? m.heardAt : p.heardAt;
                if (m.failed && heard - m.failedProbeAt < 0) {
                    stuck.add(p); // its member missed a probe, and it has not been heard from since
                } else if (now - heard >= p.silenceNanos) {
                    if (m.prober == null) {
                        m.prober = p;
                        m.probedAt = now;
                        m.patienceNanos = p.patienceNanos;
                        probe.add(p);
                    } else {
                        // a watch a hand-over waits on does not wait for a probe sent with a guard's patience
                        m.patienceNanos = Math.min(m.patienceNanos, p.patienceNanos);
                    }
                }
            }
            if (watches.isEmpty() && ticker != null) {
                ticker.cancel(false);
                ticker = null;
            }
        }
        for (Probed p : probe) {
            p.requestProgress();
        }
        for (Probed p : stuck) {
            p.stuck();
        }
    }

    private void startTicker() {
        synchronized (lock) {
            if (ticker == null) {
                long period = Math.max(1, probeTimeoutNanos / 2);
                try {
                    ticker = exec.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    // shut down: nothing left to probe
                }
            }
        }
    }

    /** An etcd member as its watch responses show it. */
    private static final class Member {
        final long id;
        /** When any watch on it was last heard from. */
        volatile long heardAt = System.nanoTime();
        /**
         * The watch its outstanding progress request went to, when, and how long the answer may take
         * (the least patience of the watches waiting on it); under the lock.
         */
        Probed prober;

        long probedAt;
        long patienceNanos;
        /** Whether a probe of it went unanswered, and when that probe was sent; under the lock. */
        boolean failed;

        long failedProbeAt;

        Member(long id) {
            this.id = id;
        }
    }

    /** One watch under observation; its listener is the one handed to jetcd. */
    private final class Probed implements Watch.Watcher, Watch.Listener {
        private final Function<Watch.Listener, Watch.Watcher> open;
        private final Watch.Listener listener;
        private final long silenceNanos;
        /** How long its creation, or a progress request sent on it, may go unanswered. */
        private final long patienceNanos;

        private final Runnable onStuck;
        /** Whether it counts among the {@code opening} watches; under the lock. */
        private boolean slot;

        private volatile Watch.Watcher watcher;
        private volatile boolean closed;
        private volatile long sentAt;
        /** The member that last answered it, null until its creation is confirmed. */
        private volatile Member member;

        private volatile long heardAt;

        private Probed(
                Function<Watch.Listener, Watch.Watcher> open,
                Watch.Listener listener,
                long silenceNanos,
                Runnable onStuck) {
            this.open = open;
            this.listener = listener;
            this.silenceNanos = silenceNanos;
            this.patienceNanos = Math.max(probeTimeoutNanos, silenceNanos);
            this.onStuck = onStuck;
        }

        /** Sends the watch, unless it was closed meanwhile (then it completes here). */
        private void send() {
            if (closed) {
                done();
                listener.onCompleted();
                return;
            }
            sentAt = System.nanoTime();
            watches.add(this);
            startTicker();
            Watch.Watcher w;
            try {
                w = open.apply(this);
            } catch (RuntimeException e) { // the client is closed
                onError(e);
                return;
            }
            watcher = w;
            if (closed) {
                w.close(); // closed while it was being sent: close() did not see the watcher
            }
        }

        /** Frees its opening slot and stops observing it; idempotent. */
        private void done() {
            watches.remove(this);
            releaseSlot();
            synchronized (lock) {
                Member m = member;
                if (m != null && m.prober == this) {
                    m.prober = null; // its answer will not come: another watch of the member is probed
                }
            }
        }

        private void releaseSlot() {
            boolean freed;
            synchronized (lock) {
                freed = slot;
                if (freed) {
                    slot = false;
                    opening--;
                }
            }
            if (freed) {
                sendMore();
            }
        }

        private void stuck() {
            done();
            onStuck.run();
            close();
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            Watch.Watcher w = watcher;
            if (w != null) {
                w.close(); // jetcd calls onCompleted()
                return;
            }
            boolean wasUnsent;
            synchronized (lock) {
                wasUnsent = unsent.remove(this);
            }
            if (wasUnsent) {
                listener.onCompleted();
            } // else it is being sent: send() sees closed and closes it
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public void requestProgress() {
            Watch.Watcher w = watcher;
            if (w != null) {
                w.requestProgress();
            }
        }

        @Override
        public void onNext(WatchResponse response) {
            long now = System.nanoTime();
            long id = response.getHeader().getMemberId();
            Member m = member;
            boolean created = m == null;
            if (created || m.id != id) { // its creation, or jetcd resumed it on another member
                m = members.computeIfAbsent(id, Member::new);
                member = m;
            }
            m.heardAt = now;
            heardAt = now;
            if (created) {
                releaseSlot();
            }
            listener.onNext(response);
        }

        @Override
        public void onError(Throwable t) {
            done();
            listener.onError(t);
        }

        @Override
        public void onCompleted() {
            done();
            listener.onCompleted();
        }
    }
}

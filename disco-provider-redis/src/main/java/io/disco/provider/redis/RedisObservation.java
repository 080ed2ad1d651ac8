package io.disco.provider.redis;

import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Observes an election on Redis: delivers every change of its leader (a new term, or a value the leader proclaimed),
 * in order, on one dedicated thread. The first delivery is the leader as it is now, read in one snapshot with where
 * the election's log ({@link RedisKeys#log}) ends ({@code observe.lua}); after it, every entry the log gained (a term's
 * start, a proclamation), read with {@code XRANGE} from where the last read ended. It reads when the name's channel
 * says the log grew, when its subscription is confirmed (again), and at the latest every {@code min(ttl, 5 s)}, for a
 * lost message. The log keeps about its last 64 entries: an observer further behind skips the older ones.
 */
final class RedisObservation implements Observation {

    private static final Logger LOG = LoggerFactory.getLogger(RedisObservation.class);

    private final SessionCore core;
    private final String name;
    private final Consumer<Leadership> listener;
    private final Consumer<RedisObservation> onClose;
    private final ScheduledThreadPoolExecutor exec;
    private final ReentrantLock delivering = new ReentrantLock();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Runnable wake = () -> schedule(0);
    private volatile boolean closed;
    private ScheduledFuture<?> poll;

    // the observation's thread only
    private String cursor;
    private long backoffMs = 50;

    RedisObservation(SessionCore core, String name, Consumer<Leadership> listener, Consumer<RedisObservation> onClose) {
        this.core = core;
        this.name = name;
        this.listener = listener;
        this.onClose = onClose;
        this.exec = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "disco-observe-redis " + name);
            t.setDaemon(true);
            return t;
        });
        this.exec.setRemoveOnCancelPolicy(true);
    }

    RedisObservation start() {
        core.wakeups().observe(name, wake);
        long every = ClaimWorker.poll(core.ttl()).toMillis();
        poll = exec.scheduleWithFixedDelay(() -> schedule(0), every, every, TimeUnit.MILLISECONDS);
        schedule(0);
        return this;
    }

    private void schedule(long delayMs) {
        if (closed || !scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            exec.schedule(this::refresh, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            scheduled.set(false);
        }
    }

    private void refresh() {
        scheduled.set(false);
        if (closed) {
            return;
        }
        try {
            read();
            backoffMs = 50;
        } catch (Exception e) {
            if (!closed) {
                LOG.debug(
                        "observing the election on {} failed, reading again in {} ms: {}",
                        name,
                        backoffMs,
                        e.toString());
                long delay = backoffMs;
                backoffMs = Math.min(1000, backoffMs * 2);
                schedule(delay);
            }
        }
    }

    private void read() throws Exception {
        if (cursor == null) {
            List<Object> now = Calls.await(
                    Scripts.OBSERVE.run(core.link().commands(), name),
                    core.requestTimeout(),
                    core.where(),
                    "observing");
            cursor = String.valueOf(now.get(0));
            if (now.size() >= 4) {
                String token = String.valueOf(now.get(2));
                deliver(new Leadership(
                        RedisKeys.grantKey(name, String.valueOf(now.get(1))),
                        String.valueOf(now.get(3)),
                        FencingToken.of(GrantStep.token(token))));
            }
            return;
        }
        List<StreamMessage<String, String>> entries = Calls.await(
                core.link()
                        .commands()
                        .xrange(
                                RedisKeys.log(name),
                                Range.from(Range.Boundary.excluding(cursor), Range.Boundary.unbounded())),
                core.requestTimeout(),
                core.where(),
                "reading the log of the election on " + name);
        for (StreamMessage<String, String> m : entries) {
            cursor = m.getId();
            Map<String, String> body = m.getBody();
            if (!deliver(new Leadership(
                    RedisKeys.grantKey(name, body.get("id")),
                    body.getOrDefault("value", ""),
                    FencingToken.of(GrantStep.token(body.get("token")))))) {
                return;
            }
        }
    }

    private boolean deliver(Leadership l) {
        delivering.lock();
        try {
            if (closed) {
                return false;
            }
            listener.accept(l);
        } catch (RuntimeException ex) {
            LOG.warn("an observer of the election on {} threw; the observation carries on", name, ex);
        } finally {
            delivering.unlock();
        }
        return true;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        core.wakeups().unobserve(name, wake);
        if (poll != null) {
            poll.cancel(false);
        }
        exec.shutdown();
        if (!delivering.isHeldByCurrentThread()) {
            delivering.lock(); // a delivery in progress finishes before close returns
            delivering.unlock();
        }
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "Redis observation of the election on " + name + (closed ? " (closed)" : "");
    }
}

package io.disco.provider.redis;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a session's waits listen to, on its one pub/sub connection: one subscription per name waited on (its channel
 * {@code disco:{n}:ch}), shared by every waiter and observer of the name, subscribed while one of them listens and
 * for a short linger after the last one left ({@link #LINGER_MS}: a name waited on again soon is not unsubscribed and
 * subscribed anew); and the channel {@link RedisKeys#GONE_CHANNEL}, for the whole session. A message on a name's
 * channel lists the waiting claims it admits: each wakes only its own waiter; a message starting with {@code +} wakes
 * the name's observers. When a subscription is confirmed (also again after Lettuce reconnected and resubscribed),
 * every waiter and observer of that name is woken to check again, for whatever was published while it was not
 * subscribed. A waiter registers before its first request only where the name's subscription is confirmed already
 * ({@link #listenIfSubscribed}); otherwise it asks first, and listens only if told to wait ({@link #listen}), then
 * checks once more (at once if the subscription was confirmed, else when its confirmation wakes it), so that no
 * wake-up published between its first answer and its registration is lost. Messages are fire and forget: the
 * waiters' deadline timers and bounded poll cover a lost one.
 *
 * <p>Lettuce calls the listener on its event loop: it only wakes (releases a semaphore, schedules a task), never
 * blocks and never runs user code.
 */
final class Wakeups {

    /** How long a name's subscription outlives its last waiter or observer. */
    static final long LINGER_MS = 1_000;

    private final StatefulRedisPubSubConnection<String, String> pubsub;
    private final Object lock = new Object();
    /** Per channel: the waiters by claim id, and the observers. */
    private final Map<String, Map<String, Runnable>> waiters = new HashMap<>();

    private final Map<String, List<Runnable>> observers = new HashMap<>();
    /** The channels subscribed (asked for, maybe not yet confirmed), each with the instant it was last left unused. */
    private final Map<String, Long> subscribed = new HashMap<>();
    /** The subscribed channels whose subscription Redis confirmed (and that were not unsubscribed since). */
    private final Set<String> confirmed = new HashSet<>();
    /** The channels left unused, each checked once after the linger: unsubscribed if still unused. */
    private final Set<String> sweeping = new HashSet<>();

    private final Scheduler scheduler;

    /** Where the linger's checks run: the session's thread. */
    interface Scheduler {
        /** @throws java.util.concurrent.RejectedExecutionException once the session ended */
        void schedule(Runnable task, long delayMs);
    }

    Wakeups(StatefulRedisPubSubConnection<String, String> pubsub, Consumer<String> gone, Scheduler scheduler) {
        this.pubsub = pubsub;
        this.scheduler = scheduler;
        pubsub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                if (RedisKeys.GONE_CHANNEL.equals(channel)) {
                    gone.accept(message);
                } else {
                    deliver(channel, message);
                }
            }

            @Override
            public void subscribed(String channel, long count) {
                synchronized (lock) {
                    if (subscribed.containsKey(channel)) {
                        confirmed.add(channel);
                    }
                }
                wakeAll(channel);
            }
        });
    }

    /** @return the subscription to the gone channel, confirmed when it completes */
    CompletableFuture<Void> start() {
        return pubsub.async().subscribe(RedisKeys.GONE_CHANNEL).toCompletableFuture();
    }

    /**
     * Registers {@code wake} for claim {@code id} of {@code name} only if the name's subscription is confirmed (in use
     * or lingering): then every message from now on reaches it, and the claim's first request needs no re-check.
     *
     * @return whether it was registered
     */
    boolean listenIfSubscribed(String name, String id, Runnable wake) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            if (!confirmed.contains(ch)) {
                return false;
            }
            waiters.computeIfAbsent(ch, c -> new HashMap<>()).put(id, wake);
            return true;
        }
    }

    /**
     * {@code wake} runs whenever a message admits claim {@code id} of {@code name}, and on every (re)subscription.
     *
     * @return whether the name's subscription was confirmed already (else its confirmation will run {@code wake})
     */
    boolean listen(String name, String id, Runnable wake) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            waiters.computeIfAbsent(ch, c -> new HashMap<>()).put(id, wake);
            return subscribe(ch);
        }
    }

    void unlisten(String name, String id) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            Map<String, Runnable> m = waiters.get(ch);
            if (m == null || m.remove(id) == null) {
                return;
            }
            if (m.isEmpty()) {
                waiters.remove(ch);
                unsubscribeIfUnused(ch);
            }
        }
    }

    /** {@code wake} runs on every message of {@code name}'s channel that starts with {@code +}, and on (re)subscription. */
    void observe(String name, Runnable wake) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            observers.computeIfAbsent(ch, c -> new CopyOnWriteArrayList<>()).add(wake);
            subscribe(ch);
        }
    }

    void unobserve(String name, Runnable wake) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            List<Runnable> l = observers.get(ch);
            if (l == null || !l.remove(wake)) {
                return;
            }
            if (l.isEmpty()) {
                observers.remove(ch);
                unsubscribeIfUnused(ch);
            }
        }
    }

    /** Subscribes {@code ch} unless it is (under the lock); @return whether its subscription is confirmed. */
    private boolean subscribe(String ch) {
        if (subscribed.putIfAbsent(ch, 0L) == null) {
            pubsub.async().subscribe(ch);
            return false;
        }
        return confirmed.contains(ch);
    }

    /** {@code ch} may have no waiter or observer left (under the lock): it lingers, then is unsubscribed if unused. */
    private void unsubscribeIfUnused(String ch) {
        if (waiters.containsKey(ch) || observers.containsKey(ch) || !subscribed.containsKey(ch)) {
            return;
        }
        subscribed.put(ch, System.nanoTime());
        if (sweeping.add(ch)) {
            sweepLater(ch, LINGER_MS);
        }
    }

    private void sweepLater(String ch, long delayMs) {
        try {
            scheduler.schedule(() -> sweep(ch), delayMs);
        } catch (RejectedExecutionException e) {
            sweeping.remove(ch); // the session ended: its connections close
        }
    }

    /** After the linger: unsubscribes {@code ch} if it is still unused and was left unused a linger ago. */
    private void sweep(String ch) {
        synchronized (lock) {
            Long leftAt = subscribed.get(ch);
            if (leftAt == null || waiters.containsKey(ch) || observers.containsKey(ch)) {
                sweeping.remove(ch);
                return;
            }
            long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - leftAt);
            if (idleMs < LINGER_MS) {
                sweepLater(ch, LINGER_MS - idleMs);
                return;
            }
            sweeping.remove(ch);
            subscribed.remove(ch);
            confirmed.remove(ch);
            try {
                pubsub.async().unsubscribe(ch);
            } catch (RuntimeException e) {
                // the connection is closed: nothing to unsubscribe
            }
        }
    }

    private void deliver(String channel, String message) {
        if (message.startsWith("+")) {
            List<Runnable> l;
            synchronized (lock) {
                l = observers.get(channel);
            }
            if (l != null) {
                l.forEach(Runnable::run);
            }
            return;
        }
        synchronized (lock) {
            Map<String, Runnable> m = waiters.get(channel);
            if (m == null) {
                return;
            }
            for (String id : message.split(" ")) {
                Runnable w = m.get(id);
                if (w != null) {
                    w.run();
                }
            }
        }
    }

    private void wakeAll(String channel) {
        List<Runnable> all = new java.util.ArrayList<>();
        synchronized (lock) {
            Map<String, Runnable> m = waiters.get(channel);
            if (m != null) {
                all.addAll(m.values());
            }
            List<Runnable> l = observers.get(channel);
            if (l != null) {
                all.addAll(l);
            }
        }
        all.forEach(Runnable::run);
    }
}

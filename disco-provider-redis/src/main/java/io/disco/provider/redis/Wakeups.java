package io.disco.provider.redis;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * What a session's waits listen to, on its one pub/sub connection: one subscription per name waited on (its channel
 * {@code disco:{n}:ch}), shared by every waiter and observer of the name, subscribed while one of them listens; and
 * the channel {@link RedisKeys#GONE_CHANNEL}, for the whole session. A message on a name's channel lists the waiting
 * claims it admits: each wakes only its own waiter; a message starting with {@code +} wakes the name's observers. When
 * a subscription is confirmed (also again after Lettuce reconnected and resubscribed), every waiter and observer of
 * that name is woken to check again, for whatever was published while it was not subscribed. Messages are fire and
 * forget: the waiters' deadline timers and bounded poll cover a lost one.
 *
 * <p>Lettuce calls the listener on its event loop: it only wakes (releases a semaphore, schedules a task), never
 * blocks and never runs user code.
 */
final class Wakeups {

    private final StatefulRedisPubSubConnection<String, String> pubsub;
    private final Object lock = new Object();
    /** Per channel: the waiters by claim id, and the observers. */
    private final Map<String, Map<String, Runnable>> waiters = new HashMap<>();

    private final Map<String, List<Runnable>> observers = new HashMap<>();

    Wakeups(StatefulRedisPubSubConnection<String, String> pubsub, Consumer<String> gone) {
        this.pubsub = pubsub;
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
                wakeAll(channel);
            }
        });
    }

    /** @return the subscription to the gone channel, confirmed when it completes */
    CompletableFuture<Void> start() {
        return pubsub.async().subscribe(RedisKeys.GONE_CHANNEL).toCompletableFuture();
    }

    /** {@code wake} runs whenever a message admits claim {@code id} of {@code name}, and on every (re)subscription. */
    void listen(String name, String id, Runnable wake) {
        String ch = RedisKeys.channel(name);
        synchronized (lock) {
            boolean first = !waiters.containsKey(ch) && !observers.containsKey(ch);
            waiters.computeIfAbsent(ch, c -> new HashMap<>()).put(id, wake);
            if (first) {
                pubsub.async().subscribe(ch);
            }
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
            boolean first = !waiters.containsKey(ch) && !observers.containsKey(ch);
            observers.computeIfAbsent(ch, c -> new CopyOnWriteArrayList<>()).add(wake);
            if (first) {
                pubsub.async().subscribe(ch);
            }
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

    private void unsubscribeIfUnused(String ch) {
        if (!waiters.containsKey(ch) && !observers.containsKey(ch)) {
            pubsub.async().unsubscribe(ch);
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

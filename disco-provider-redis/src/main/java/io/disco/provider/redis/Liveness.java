package io.disco.provider.redis;

import io.disco.core.internal.session.SessionExecutors;
import io.lettuce.core.ExpireArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How a session stays alive and learns that it is not: one logical lease for all its claims.
 *
 * <p>Every claim of the session, held or waiting, is a key with the session's TTL {@code T}. A renewal round goes
 * every {@code T/3}, on the session's thread: a {@code PING} and, pipelined on the session's connection, one
 * {@code PEXPIRE <claim> T XX} per claim. Once every request of a round is answered, the session is valid until the
 * local monotonic instant the round was <em>sent</em>, plus {@code T}, minus a margin of {@code T/10} for the
 * difference between the rates of this host's clock and the server's: the server received the round later than it
 * was sent and counts {@code T} from then, so the session declares itself lost (the watchdog, every {@code T/24})
 * before the server can expire any claim of it. A {@code PEXPIRE} answered 0 means that claim's key is gone (deleted
 * behind the owner's back, or expired): that claim's loss, told to whoever registered it ({@link Gone}).
 *
 * <p>Answers complete on Lettuce's threads and are handed to the session's thread at once; no user code runs here.
 */
final class Liveness {

    /** Told, on the session's thread, that a registered claim's key is gone. */
    interface Gone {
        void gone(String reason);
    }

    /** Where a loss is reported: the session. */
    interface Loss {
        void lose(String reason, Throwable cause);
    }

    /** Who hears how the rounds fare: the session's listeners. */
    interface Renewals {
        void renewed(Duration remaining);

        void renewalFailing(Duration failingFor, Duration remaining, Throwable cause);
    }

    private final RedisClusterAsyncCommands<String, String> commands;
    private final String where;
    private final long ttlNanos;
    private final long validityNanos;
    private final SessionExecutors executors;
    private final SessionStatus status;
    private final Loss loss;
    private final Renewals renewals;
    private final Map<String, Gone> claims = new ConcurrentHashMap<>();
    /** The local send time of the newest round whose every request was answered. */
    private final AtomicLong confirmed;

    private volatile boolean frozen;
    private volatile ScheduledFuture<?> rounds;
    private volatile ScheduledFuture<?> watchdog;

    Liveness(
            RedisClusterAsyncCommands<String, String> commands,
            String where,
            Duration ttl,
            long confirmedAt,
            SessionExecutors executors,
            SessionStatus status,
            Loss loss,
            Renewals renewals) {
        this.commands = commands;
        this.where = where;
        this.ttlNanos = ttl.toNanos();
        this.validityNanos = ttlNanos - ttlNanos / 10;
        this.confirmed = new AtomicLong(confirmedAt);
        this.executors = executors;
        this.status = status;
        this.loss = loss;
        this.renewals = renewals;
    }

    void start() {
        rounds = executors.every(this::round, ttlNanos / 3);
        watchdog = executors.every(this::checkDeadline, Math.max(5_000_000L, ttlNanos / 24));
    }

    void stop() {
        if (rounds != null) {
            rounds.cancel(false);
            watchdog.cancel(false);
        }
    }

    /** Stops the renewals, as a stopped process's would: the claims expire on the server after the TTL. */
    void freeze() {
        frozen = true;
    }

    boolean frozen() {
        return frozen;
    }

    Duration ttl() {
        return Duration.ofNanos(ttlNanos);
    }

    /** @return how long the session is valid from now; zero once ended */
    Duration remainingValidity() {
        if (status.ended()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, confirmed.get() + validityNanos - System.nanoTime()));
    }

    /** Renews {@code key} from the next round on; {@code gone} hears if a round finds it gone. */
    void register(String key, Gone gone) {
        claims.put(key, gone);
    }

    /** Renews {@code key} no more: before it is deleted, so that a round never takes its deletion for a loss. */
    void unregister(String key) {
        claims.remove(key);
    }

    /** @return the claim registered under {@code key}, or null */
    Gone registered(String key) {
        return claims.get(key);
    }

    private void round() {
        if (frozen || status.ended()) {
            return;
        }
        long sent = System.nanoTime();
        List<Map.Entry<String, Gone>> sentFor = new ArrayList<>(claims.entrySet());
        List<CompletableFuture<?>> answers = new ArrayList<>(sentFor.size() + 1);
        answers.add(commands.ping().toCompletableFuture());
        long ttlMs = TimeUnit.NANOSECONDS.toMillis(ttlNanos);
        ExpireArgs xx = ExpireArgs.Builder.xx();
        List<CompletableFuture<Boolean>> renewed = new ArrayList<>(sentFor.size());
        for (Map.Entry<String, Gone> e : sentFor) {
            CompletableFuture<Boolean> f =
                    commands.pexpire(e.getKey(), ttlMs, xx).toCompletableFuture();
            renewed.add(f);
            answers.add(f);
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                .orTimeout(ttlNanos, TimeUnit.NANOSECONDS)
                .whenComplete((v, e) -> executors.onSessionThread(() -> answered(sent, sentFor, renewed, e)));
    }

    private void answered(
            long sent, List<Map.Entry<String, Gone>> sentFor, List<CompletableFuture<Boolean>> renewed, Throwable e) {
        if (status.ended()) {
            return;
        }
        if (e != null) {
            renewals.renewalFailing(
                    Duration.ofNanos(System.nanoTime() - confirmed.get()), remainingValidity(), unwrap(e));
            return;
        }
        confirmed.accumulateAndGet(sent, Math::max);
        renewals.renewed(remainingValidity());
        for (int i = 0; i < sentFor.size(); i++) {
            Map.Entry<String, Gone> entry = sentFor.get(i);
            if (!Boolean.TRUE.equals(renewed.get(i).getNow(true)) && claims.get(entry.getKey()) == entry.getValue()) {
                claims.remove(entry.getKey(), entry.getValue());
                entry.getValue()
                        .gone("its key " + entry.getKey() + " was gone at a renewal (deleted by somebody else,"
                                + " or expired)");
            }
        }
    }

    private void checkDeadline() {
        if (frozen && status.ended()) {
            return;
        }
        long silent = System.nanoTime() - confirmed.get();
        if (silent > validityNanos) {
            loss.lose(
                    "no renewal confirmed by " + where + " for " + TimeUnit.NANOSECONDS.toMillis(silent)
                            + " ms, past the session's validity of " + TimeUnit.NANOSECONDS.toMillis(validityNanos)
                            + " ms (its TTL of " + TimeUnit.NANOSECONDS.toMillis(ttlNanos)
                            + " ms less a tenth): the server may expire its claims",
                    null);
        }
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}

package io.disco.provider.redis;

import io.disco.client.Barriers;
import io.lettuce.core.SetArgs;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The barrier steps ({@link Barriers}) of one session on Redis. A barrier {@code n} is one key,
 * {@link RedisKeys#barrier} {@code disco:{n}:bar}, in the name's slot and without TTL: it belongs to no owner and
 * outlives the session that raised it (its value says who did, {@code ClaimMetadata}'s JSON). Raising is
 * {@code SET NX}, reading {@code EXISTS}, lowering {@code lower.lua} (deletes the key and, if it was there, publishes
 * {@code +b} on the name's channel); a wait for the fall is a {@link BarrierWatch} whose check is {@code EXISTS}. Double
 * barrier participants are {@link RedisBarrierParticipant}s. Every request is bounded by the request timeout and
 * answered on the session's thread, never on Lettuce's.
 */
final class RedisBarriers implements Barriers {

    private final SessionCore core;

    RedisBarriers(SessionCore core) {
        this.core = core;
    }

    @Override
    public CompletableFuture<Boolean> raise(String name) {
        String key = RedisKeys.barrier(RedisKeys.checkName(name));
        String meta = core.claimData();
        return request(() -> core.link().commands().set(key, meta, SetArgs.Builder.nx()), "raising the barrier " + name)
                .thenApply("OK"::equals);
    }

    @Override
    public CompletableFuture<Boolean> lower(String name) {
        String checked = RedisKeys.checkName(name);
        return request(() -> Scripts.LOWER.run(core.link().commands(), checked), "lowering the barrier " + name)
                .thenApply(answer -> "lowered".equals(first(answer)));
    }

    @Override
    public CompletableFuture<Boolean> isUp(String name) {
        String key = RedisKeys.barrier(RedisKeys.checkName(name));
        return request(() -> core.link().commands().exists(key), "reading the barrier " + name)
                .thenApply(n -> n != null && n > 0);
    }

    @Override
    public CompletableFuture<Void> lowered(String name) {
        String checked = RedisKeys.checkName(name);
        String key = RedisKeys.barrier(checked);
        CompletableFuture<Void> down = new CompletableFuture<>();
        BarrierWatch.start(
                core,
                checked,
                down,
                result -> request(() -> core.link().commands().exists(key), "reading the barrier " + checked)
                        .thenApply(n -> {
                            if (n == null || n == 0) {
                                result.complete(null);
                            }
                            return -1L;
                        }));
        return down;
    }

    @Override
    public Participant participant(String name, int participants) {
        if (participants < 1) {
            throw new IllegalArgumentException(
                    "a double barrier waits for at least 1 participant, not " + participants);
        }
        return new RedisBarrierParticipant(core, RedisKeys.checkName(name), participants);
    }

    private <T> CompletableFuture<T> request(Supplier<CompletionStage<T>> send, String doing) {
        return request(core, send, doing);
    }

    /**
     * One request of the session, bounded by the request timeout, answered on the session's thread; one that could
     * not even be sent (the connection is closed) fails the same way.
     */
    static <T> CompletableFuture<T> request(SessionCore core, Supplier<CompletionStage<T>> send, String doing) {
        CompletionStage<T> sent;
        try {
            sent = send.get();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return Calls.within(sent, core.requestTimeout(), core.where(), doing, core::onSessionThread);
    }

    /** @return a script's first answer, its verdict */
    static String first(List<Object> answer) {
        return answer == null || answer.isEmpty() ? "" : String.valueOf(answer.get(0));
    }
}

package io.disco.provider.redis;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import io.disco.fencing.DiscoException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One double barrier participant of one session on Redis. It is a claim of the session, {@code disco:{n}:c:<id>}
 * ({@link RedisKeys#claim}) of kind {@code d} with the session's TTL, renewed with its other claims ({@link Liveness})
 * and so counted exactly as long as a lock holder's claim would be (an expired or ended owner's participant stops
 * counting within its TTL), and a member of the name's participant set ({@link RedisKeys#participants}) scored by its
 * registration sequence. Its steps are scripts on the name's slot: {@code enter.lua} registers it and opens the barrier
 * when the count is complete (then checks again, as a {@link BarrierWatch}, until it opened), {@code withdraw.lua}
 * withdraws it unless the barrier opened while it was registered, {@code leave.lua} removes it (then checks again
 * until no participant of its round is left). Each step is sent only once the previous step's request was answered
 * (or timed out), so that a step never overtakes one whose future the client cancelled; a step's future may so take
 * up to two request timeouts in that case. A key removed, or whose removal failed, is renewed no more: at worst it
 * expires within the TTL.
 */
final class RedisBarrierParticipant implements Barriers.Participant {

    private static final SecureRandom IDS = new SecureRandom();

    private final SessionCore core;
    private final String name;
    private final int participants;
    private final String id;
    private final String key;
    /** The previous step's request: the next one is sent once it is answered. Guarded by this. */
    private CompletableFuture<?> previous = CompletableFuture.completedFuture(null);
    /** The wait to enter, once registered: woken when a renewal or the gone channel finds the key gone. */
    private volatile BarrierWatch entering;

    RedisBarrierParticipant(SessionCore core, String name, int participants) {
        this.core = core;
        this.name = name;
        this.participants = participants;
        byte[] b = new byte[8];
        IDS.nextBytes(b);
        this.id = HexFormat.of().formatHex(b);
        this.key = RedisKeys.claim(name, id);
    }

    @Override
    public CompletableFuture<Void> enter() {
        CompletableFuture<Void> result = new CompletableFuture<>();
        try {
            core.useName(name); // the session's close sweeps the name
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String meta = core.claimData();
        CompletableFuture<List<Object>> registered = step(
                () -> Scripts.ENTER.run(
                        core.link().commands(),
                        name,
                        id,
                        core.ownerText(),
                        meta,
                        Long.toString(core.ttl().toMillis()),
                        Integer.toString(participants),
                        "1"),
                "registering the double barrier participant " + key);
        core.track(registered.handle((a, e) -> null)); // a close sweeps after the registration landed
        registered.whenComplete((answer, e) -> {
            if (e != null) {
                result.completeExceptionally(e); // maybe created: unrenewed, it expires; the client removes it
                return;
            }
            try {
                registered(answer, result);
            } catch (RuntimeException ex) {
                result.completeExceptionally(ex); // never left hanging
            }
        });
        return result;
    }

    /** The registration's answer: refused, open, or a wait to start. */
    private void registered(List<Object> answer, CompletableFuture<Void> result) {
        switch (RedisBarriers.first(answer)) {
            case "refused" ->
                result.completeExceptionally(new IllegalStateException("double barrier '" + name
                        + "': " + answer.get(1) + " participants would be registered, more than its " + participants
                        + " (a previous round is still inside or leaving); this one was not registered"));
            case "open" -> {
                core.liveness().register(key, this::gone);
                result.complete(null);
            }
            case "wait" -> {
                core.liveness().register(key, this::gone);
                entering = BarrierWatch.start(core, name, result, this::checkEntered);
            }
            default ->
                result.completeExceptionally(
                        new DiscoException(core.where() + " answered " + answer + " to registering " + key));
        }
    }

    /** One check of the wait to enter. */
    private CompletableFuture<Long> checkEntered(CompletableFuture<Void> result) {
        return RedisBarriers.request(
                        core,
                        () -> Scripts.ENTER.run(
                                core.link().commands(),
                                name,
                                id,
                                core.ownerText(),
                                "",
                                Long.toString(core.ttl().toMillis()),
                                Integer.toString(participants),
                                "0"),
                        "checking the double barrier participant " + key)
                .thenApply(answer -> {
                    switch (RedisBarriers.first(answer)) {
                        case "open" -> result.complete(null);
                        case "gone" -> {
                            core.liveness().unregister(key);
                            result.completeExceptionally(new BarrierLostException(
                                    "double barrier '" + name + "': the participant's key " + key + " is gone (deleted"
                                            + " by somebody else, or expired) before the barrier opened",
                                    null));
                        }
                        default -> {
                            // still waiting for the others
                        }
                    }
                    return -1L;
                });
    }

    /** The key was found gone (a renewal, or the gone channel): the wait to enter checks at once. */
    private void gone(String reason) {
        BarrierWatch w = entering;
        if (w != null) {
            w.wake();
        }
    }

    @Override
    public CompletableFuture<Boolean> withdraw() {
        return step(
                        () -> Scripts.WITHDRAW.run(core.link().commands(), name, id, core.ownerText()),
                        "withdrawing the double barrier participant " + key)
                .handle((answer, e) -> {
                    boolean stays = e == null && "open".equals(RedisBarriers.first(answer));
                    if (!stays) {
                        core.liveness().unregister(key); // withdrawn; or, if that failed, it expires unrenewed
                    }
                    if (e != null) {
                        throw e instanceof RuntimeException r ? r : new DiscoException(e.toString(), e);
                    }
                    return !stays;
                });
    }

    @Override
    public CompletableFuture<Void> leave() {
        core.liveness().unregister(key); // renewed no more: left, or, if that fails, it expires
        CompletableFuture<Void> result = new CompletableFuture<>();
        step(
                        () -> Scripts.LEAVE.run(core.link().commands(), name, id, core.ownerText(), ""),
                        "removing the double barrier participant " + key)
                .whenComplete((answer, e) -> {
                    if (e != null) {
                        result.completeExceptionally(e);
                    } else if ("gone".equals(RedisBarriers.first(answer))) {
                        result.completeExceptionally(new BarrierLostException(
                                "double barrier '" + name + "': the participant's key " + key + " was gone before it"
                                        + " left (its owner lost, or the key deleted from outside)",
                                null));
                    } else if (!"wait".equals(RedisBarriers.first(answer))) {
                        result.complete(null);
                    } else {
                        String upto = String.valueOf(answer.get(1));
                        BarrierWatch.start(core, name, result, r -> checkLeft(r, upto));
                    }
                });
        return result;
    }

    /** One check of the wait for the round registered up to sequence {@code upto} to leave. */
    private CompletableFuture<Long> checkLeft(CompletableFuture<Void> result, String upto) {
        return RedisBarriers.request(
                        core,
                        () -> Scripts.LEAVE.run(core.link().commands(), name, id, core.ownerText(), upto),
                        "waiting for the double barrier " + name + " to be left")
                .thenApply(answer -> {
                    if (!"wait".equals(RedisBarriers.first(answer))) {
                        result.complete(null);
                        return -1L;
                    }
                    return Long.parseLong(String.valueOf(answer.get(2))); // the soonest a participant may expire
                });
    }

    @Override
    public CompletableFuture<Void> remove() {
        core.liveness().unregister(key);
        return step(
                        () -> Scripts.LEAVE.run(core.link().commands(), name, id, core.ownerText(), ""),
                        "removing the double barrier participant " + key)
                .thenApply(answer -> null);
    }

    /** Sends a step's request once the previous one's was answered; answered on the session's thread. */
    private synchronized <T> CompletableFuture<T> step(Supplier<CompletionStage<T>> send, String doing) {
        CompletableFuture<T> answer =
                previous.handle((v, e) -> null).thenCompose(ignored -> RedisBarriers.request(core, send, doing));
        previous = answer;
        return answer;
    }

    @Override
    public String toString() {
        return "double barrier participant " + key + " (" + participants + " participants)";
    }
}

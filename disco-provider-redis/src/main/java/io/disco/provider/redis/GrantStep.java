package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One request of an acquisition to Redis: its claim enqueued (or adopted) and admitted if its turn has come, by the
 * script {@code acquire.lua}, with the token of the primary's lineage ({@link TokenLineage}); then, when grants need
 * replica acknowledgements, {@code WAIT} on the same connection ({@link Link.Grantor}, never the session's multiplexed
 * one, which {@code WAIT} would block). A token whose acknowledgements do not come in time is never handed out: the
 * acquisition fails closed with an {@link UnsafeTokenException}, and its claim (and so the token) is withdrawn.
 */
final class GrantStep {

    /** What the request answered. */
    sealed interface Answer {}

    /** Admitted, with its token (the record's text and the number) and its semaphore slot (-1 for none). */
    record Admitted(String tokenText, long token, int slot) implements Answer {}

    /** Not yet: {@code pttl} ms until the soonest claim ahead expires (-1: unknown), {@code ahead} live claims ahead. */
    record Wait(long pttl, long ahead) implements Answer {}

    /** The claim is gone (deleted, or expired): it was not re-created. */
    record Gone() implements Answer {}

    /** Admissible, but the token could not be assigned now (the lineage changed or is not settled): ask again. */
    record Retry(String why) implements Answer {}

    private GrantStep() {}

    /**
     * Sends the request once.
     *
     * @param create whether the claim may be created (the first request, and its copies until one is answered)
     * @throws TimeoutException if Redis did not answer within {@code timeout}
     * @throws UnsafeTokenException if the token could not be made safe (refused by the record, or acknowledged by too
     *     few replicas)
     * @throws DiscoException if Redis failed
     */
    static Answer send(SessionCore core, String name, QueueClaim<?> a, int limit, boolean create, Duration timeout)
            throws InterruptedException, TimeoutException {
        int acks = core.acks();
        boolean dedicated = core.grantsOnOwnConnection();
        Link.Grantor grantor = dedicated ? core.link().borrow(timeout) : null;
        boolean broken = true;
        try {
            Link.Node node = dedicated
                    ? grantor.node(name)
                    : new Link.Node("", core.link().commands());
            TokenLineage.Line line = core.lineage().cached(node.id());
            if (line == null) {
                try {
                    line = core.lineage().read(node);
                } catch (TokenLineage.Unsettled u) {
                    broken = false;
                    return new Retry(u.getMessage());
                }
            }
            List<Object> answer = Calls.await(
                    request(node.commands(), core, name, a, limit, create, line),
                    timeout,
                    core.where(),
                    "acquiring " + a.key);
            Answer result;
            try {
                result = interpret(core, name, a, limit, answer, node.id());
            } catch (UnsafeTokenException e) {
                broken = false; // refused: the connection answered
                throw e;
            } catch (IllegalArgumentException e) {
                if (e.getClass() == IllegalArgumentException.class) {
                    broken = false; // another limit: the connection answered
                }
                throw e;
            }
            if (result instanceof Admitted ad && acks > 0) {
                long got = Calls.await(
                        node.commands()
                                .waitForReplication(acks, core.grantAckTimeout().toMillis()),
                        core.grantAckTimeout().plus(timeout),
                        core.where(),
                        "waiting for " + acks + " replica(s) to acknowledge the grant of " + a.key);
                if (got < acks) {
                    broken = false;
                    throw new UnsafeTokenException("the grant of " + a.key + " (token " + ad.tokenText() + ") reached "
                            + got + " replica(s) within "
                            + core.grantAckTimeout().toMillis() + " ms, fewer"
                            + " than the " + acks + " RedisOptions.replicaAcks asks for: a failover could lose"
                            + " it, so it is not handed out (the token is consumed)");
                }
            }
            broken = false;
            return result;
        } finally {
            if (grantor != null) {
                core.link().giveBack(grantor, broken);
            }
        }
    }

    /**
     * Sends the acquire script once, answered on Lettuce's threads.
     *
     * @param line the lineage of the node {@code commands} reach
     */
    static CompletableFuture<List<Object>> request(
            RedisClusterAsyncCommands<String, String> commands,
            SessionCore core,
            String name,
            QueueClaim<?> a,
            int limit,
            boolean create,
            TokenLineage.Line line) {
        return Scripts.ACQUIRE.run(
                commands,
                name,
                a.id,
                core.ownerText(),
                a.kind.code(),
                a.meta,
                a.value,
                Long.toString(core.ttl().toMillis()),
                create ? "1" : "0",
                line.replid(),
                Long.toString(line.epoch()),
                Integer.toString(limit));
    }

    /**
     * What the acquire script's {@code answer} says (before any replica acknowledgement: {@link #send} waits for
     * those); a 'retry' forgets node {@code nodeId}'s lineage.
     *
     * @throws UnsafeTokenException if the record refused a token
     * @throws IllegalArgumentException if the semaphore exists with another limit
     * @throws DiscoException if the answer is not one of the script's
     */
    static Answer interpret(
            SessionCore core, String name, QueueClaim<?> a, int limit, List<Object> answer, String nodeId) {
        String what = String.valueOf(answer.get(0));
        return switch (what) {
            case "admitted" -> {
                String text = String.valueOf(answer.get(1));
                yield new Admitted(text, token(text), Integer.parseInt(String.valueOf(answer.get(2))));
            }
            case "wait" -> new Wait(number(answer.get(1)), number(answer.get(2)));
            case "gone" -> new Gone();
            case "retry" -> {
                core.lineage().forget(nodeId);
                yield new Retry(answer.get(1) + (answer.size() > 2 ? " " + answer.get(2) : ""));
            }
            case "refused" -> {
                String why = String.valueOf(answer.get(1));
                if (why.startsWith("the semaphore exists with limit")) {
                    throw new IllegalArgumentException("the semaphore " + name + " exists with another limit: " + why
                            + "; this service asked" + " for limit " + limit);
                }
                throw new UnsafeTokenException(core.where() + " refused a token for " + name + ": " + why);
            }
            default ->
                throw new DiscoException(core.where() + " answered the acquisition of " + a.key + " with " + answer);
        };
    }

    /** @return the token of the record's text {@code <epoch>:<gen>:<seq>}: epoch (20 bits) | gen (11) | seq (32) */
    static long token(String text) {
        String[] f = text.split(":");
        if (f.length != 3) {
            throw new DiscoException("a claim's token is not <epoch>:<gen>:<seq>: " + text);
        }
        long epoch = Long.parseLong(f[0]);
        long gen = Long.parseLong(f[1]);
        long seq = Long.parseLong(f[2]);
        return (epoch << 43) | (gen << 32) | seq;
    }

    private static long number(Object o) {
        return o instanceof Long l ? l : Long.parseLong(String.valueOf(o));
    }

    static long millis(Duration d) {
        return TimeUnit.NANOSECONDS.toMillis(d.toNanos());
    }
}

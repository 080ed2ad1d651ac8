package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.redis.RedisKeys;
import io.disco.provider.redis.RedisSession;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code disco break NAME} on Redis: the provider's own break ({@link RedisSession#breakClaims}, the script the
 * library's test hooks break with), in one script guarded on every target claim still existing and holding, else
 * nothing is deleted:
 * <ul>
 *   <li>lock, election, a writer: the holder's claim key {@code disco:{<name>}:c:<id>} and its queue entry;</li>
 *   <li>a read phase: every reader's claim, and the read phase's token in the token record (field {@code phase}), so
 *       that the next reader's token is a new one above the broken readers';</li>
 *   <li>a permit: its claim and its slot in {@code disco:{<name>}:slots}.</li>
 * </ul>
 * The same script wakes the claims now admitted (a waiter acquires at once) and announces each deletion on
 * {@link RedisKeys#GONE_CHANNEL}, where the holder's session hears it and reports the loss at once ({@code disco watch}
 * hears it too, and says {@code broken}). The token record {@code disco:{<name>}:tok} is never deleted: every token
 * issued after the break is above every token issued before it, the broken one included.
 */
final class RedisBreak {

    private final Redis redis;
    private final Primitive kind;
    private final String name;
    private final List<Claimant> targets;
    private final boolean readers;

    private RedisBreak(Redis redis, Primitive kind, String name, List<Claimant> targets, boolean readers) {
        this.redis = redis;
        this.kind = kind;
        this.name = name;
        this.targets = targets;
        this.readers = readers;
    }

    static RedisBreak of(Redis redis, Primitive kind, String name, List<Claimant> targets, boolean readers) {
        return new RedisBreak(redis, kind, name, targets, readers);
    }

    /** @return what the break deletes (and frees), for the confirmation */
    List<String> deletes() {
        List<String> out = new ArrayList<>();
        for (Claimant t : targets) {
            out.add(Redis.redisKey(t.key()) + (kind == Primitive.SEMAPHORE ? " (and frees its slot)" : ""));
        }
        if (readers) {
            out.add("the read phase's token (field phase of " + RedisKeys.tokens(name) + ")");
        }
        return out;
    }

    /**
     * Breaks, guarded; prints what was deleted and the tokens.
     *
     * @return {@link ExitCode#OK}
     * @throws CliFailure {@link ExitCode#NOT_BROKEN} when a target is gone or no longer holds
     */
    int commit(PrintWriter out) {
        List<String> ids = targets.stream()
                .map(t -> RedisKeys.parseClaim(t.key()).orElseThrow()[1])
                .toList();
        List<String> owners = redis.provider(
                () -> RedisSession.breakClaims(redis.connection(), name, ids, true, readers, redis.timeout()),
                "guarded break of the holder's claim");
        if (owners.isEmpty()) {
            throw new CliFailure(
                    ExitCode.NOT_BROKEN,
                    "the holder changed since it was read (released, or its claim expired): nothing deleted; run"
                            + " disco holders " + name + " again");
        }
        out.printf("broken: deleted %s%n", String.join(", ", deletes()));
        OptionalLong broken = targets.stream()
                .map(Claimant::token)
                .flatMap(Optional::stream)
                .mapToLong(t -> t.value())
                .max();
        String was = broken.isPresent()
                ? "the broken holder's token was " + broken.getAsLong()
                : "the broken holder's token was not listed";
        out.printf(
                "%s; the next %s's token will exceed it (the token record %s stays: every token issued from now on is"
                        + " above it).%n",
                was, kind == Primitive.ELECTION ? "leader" : "holder", RedisKeys.tokens(name));
        String mark = broken.isPresent() ? Long.toString(broken.getAsLong() + 1) : "above its token";
        out.println("The holder hears of the break at once (on " + RedisKeys.GONE_CHANNEL + ") and reports the loss;"
                + " a guard rejects its token once it has admitted a newer one (raise the guard's mark to " + mark
                + " to reject it now).");
        return ExitCode.OK;
    }
}

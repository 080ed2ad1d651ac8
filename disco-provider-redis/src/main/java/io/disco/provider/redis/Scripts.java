package io.disco.provider.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The provider's Lua scripts (one {@code .lua} file per script in this package's resources, each prepended with
 * {@code common.lua}), run with {@code EVALSHA} and, when the server does not know the script ({@code NOSCRIPT}:
 * after a restart, a failover, {@code SCRIPT FLUSH}), with {@code EVAL}, which loads it. Every script's first two keys
 * are the name's token record and queue ({@link RedisKeys}), so Cluster routes it to the name's slot.
 */
enum Scripts {
    /** Enqueues (or adopts) a claim and admits it if its turn has come, with its token. */
    ACQUIRE("acquire"),
    /** Deletes one claim of its owner: a release guarded by its token, or a withdrawal. */
    RELEASE("release"),
    /** Deletes a claim behind its owner's back (an operator's break). */
    BREAK("break"),
    /** Reads a name's queue. */
    LIST("list"),
    /** A leader's new value. */
    PROCLAIM("proclaim"),
    /** Records or reads a semaphore's limit. */
    LIMIT("limit"),
    /** Where an election's log ends, and who leads. */
    OBSERVE("observe"),
    /** Deletes every claim of one owner on a name: its session closes. */
    DROP("drop"),
    /** Lowers a barrier and wakes its waiters. */
    LOWER("lower"),
    /** Registers or checks a double barrier participant; opens the barrier when the count is complete. */
    ENTER("enter"),
    /** Withdraws a double barrier participant, unless the barrier opened while it was registered. */
    WITHDRAW("withdraw"),
    /** Removes a double barrier participant, and tells whether its round is still there. */
    LEAVE("leave"),
    /** Reads a double barrier's live participants. */
    PARTICIPANTS("participants");

    private final String source;
    private final String sha;

    Scripts(String file) {
        this.source = read("common.lua") + "\n" + read(file + ".lua");
        try {
            this.sha = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-1", e);
        }
    }

    /** @return the script's text, common part included */
    String source() {
        return source;
    }

    /** @return the script's SHA-1, as {@code EVALSHA} names it */
    String sha() {
        return sha;
    }

    /**
     * Runs the script for {@code name} on {@code commands}: {@code EVALSHA}, then {@code EVAL} on {@code NOSCRIPT}.
     *
     * @param commands where (the connection's futures complete on Lettuce's threads: hand their answer over)
     * @param name the primitive's name, whose token record and queue are the script's keys
     * @param args the script's arguments
     * @return its answer, a list of strings (and numbers)
     */
    CompletableFuture<List<Object>> run(
            RedisClusterAsyncCommands<String, String> commands, String name, String... args) {
        String[] keys = {RedisKeys.tokens(name), RedisKeys.queue(name)};
        CompletableFuture<List<Object>> first = commands.<List<Object>>evalsha(sha, ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture();
        return first.handle((answer, e) -> {
                    if (e == null) {
                        return CompletableFuture.completedFuture(answer);
                    }
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof RedisNoScriptException
                            || String.valueOf(cause.getMessage()).startsWith("NOSCRIPT")) {
                        return commands.<List<Object>>eval(source, ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture();
                    }
                    return CompletableFuture.<List<Object>>failedFuture(cause);
                })
                .thenCompose(f -> f);
    }

    private static String read(String file) {
        try (InputStream in = Scripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("the script " + file + " is missing from the provider's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

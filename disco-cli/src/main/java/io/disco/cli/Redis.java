package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.provider.redis.RedisKeys;
import io.disco.provider.redis.RedisSession;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/**
 * One Lettuce connection to Redis and the timeout of every call, for {@code --backend redis}: connecting waits at most
 * {@code --command-timeout}, and so does each answer after it (Lettuce's own command timeout is set to it too, and a
 * command sent while the connection is down fails at once instead of waiting in a queue), so an unreachable, frozen
 * or foreign server ends the command with {@link ExitCode#UNREACHABLE} and a message naming the server and why, never
 * a hang.
 *
 * <p>The server is named by a Lettuce URI: {@code redis://[[user]:password@]host[:port][/db]}, {@code rediss://...}
 * for TLS (verified with the JVM's default trust store), or {@code redis-sentinel://host:port[,host:port...]#master}
 * for the primary a set of sentinels names. The connection holds no claim: a killed tool leaves nothing behind. The
 * layout read is the provider's ({@link RedisKeys}), and so is the listing ({@link RedisSession#claimants}) and the
 * break ({@link RedisSession#breakClaims}).
 */
final class Redis implements Cluster {

    /** The URI without {@code --redis-uri}: redis-cli's default server. */
    static final String DEFAULT_URI = "redis://127.0.0.1:6379";

    private final RedisClient client;
    private final ClientResources resources;
    private final RedisURI uri;
    private final String where;
    private final Duration timeout;
    private StatefulRedisConnection<String, String> connection;
    private final List<StatefulRedisPubSubConnection<String, String>> subscriptions = new ArrayList<>();
    /** The time to live each claim key had when last read, with when, by key; and by owner (the least), ms (-1: none). */
    private final Map<String, TtlReading> ttlByKey = new ConcurrentHashMap<>();

    private final Map<Long, Long> pttlByOwner = new ConcurrentHashMap<>();

    private Redis(RedisClient client, ClientResources resources, RedisURI uri, Duration timeout) {
        this.client = client;
        this.resources = resources;
        this.uri = uri;
        this.where = describe(uri);
        this.timeout = timeout;
    }

    /**
     * @return {@code text} as Lettuce's URI, when it names a server this tool can use; else a usage failure (exit 2)
     */
    static RedisURI parse(String text) {
        String example = "give redis://host:port, rediss://host:port (TLS) or"
                + " redis-sentinel://host:port[,host:port...]#master, such as redis://10.0.0.1:6379";
        String t = text == null ? "" : text.trim();
        if (t.isEmpty()) {
            throw new CliFailure(ExitCode.USAGE, "--redis-uri: no server given; " + example);
        }
        String scheme = t.contains("://") ? t.substring(0, t.indexOf("://")).toLowerCase(Locale.ROOT) : "";
        if (!List.of("redis", "rediss", "redis-sentinel", "rediss-sentinel").contains(scheme)) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "--redis-uri: '" + t + "' "
                            + (scheme.isEmpty()
                                    ? "has no scheme"
                                    : "has the scheme " + scheme + "://, which the tool does not take")
                            + "; " + example);
        }
        RedisURI uri;
        try {
            uri = RedisURI.create(t);
        } catch (RuntimeException e) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "--redis-uri: '" + t + "' is not a Redis URI (" + e.getMessage() + "); " + example,
                    e);
        }
        if (scheme.endsWith("-sentinel")) {
            if (uri.getSentinels().isEmpty()
                    || uri.getSentinelMasterId() == null
                    || uri.getSentinelMasterId().isBlank()) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--redis-uri: '" + t + "' names no sentinel or no master (#master at the end); " + example);
            }
        } else if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw new CliFailure(ExitCode.USAGE, "--redis-uri: '" + t + "' names no host; " + example);
        }
        return uri;
    }

    /**
     * Connects to the server {@code uri} names, waiting at most {@code timeout}.
     *
     * @throws CliFailure {@link ExitCode#UNREACHABLE} when no connection completed in time, saying why;
     *     {@link ExitCode#FAILED} when the server refused it (authentication, a TLS handshake that failed)
     */
    static Redis connect(RedisURI uri, Duration timeout) {
        uri.setTimeout(timeout);
        for (RedisURI sentinel : uri.getSentinels()) {
            sentinel.setTimeout(timeout);
        }
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .build();
        RedisClient client = RedisClient.create(resources);
        client.setOptions(ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .autoReconnect(true)
                .build());
        Redis redis = new Redis(client, resources, uri, timeout);
        try {
            redis.connection = redis.awaitConnection(client.connectAsync(StringCodec.UTF8, uri), "connection");
            redis.await(redis.connection.async().ping(), "PING");
        } catch (RuntimeException e) {
            redis.close();
            throw e;
        }
        return redis;
    }

    /**
     * Opens a pub/sub connection for {@code disco watch} (closed with this), waiting at most the command timeout.
     */
    StatefulRedisPubSubConnection<String, String> subscriber() {
        StatefulRedisPubSubConnection<String, String> s =
                awaitConnection(client.connectPubSubAsync(StringCodec.UTF8, uri), "pub/sub connection");
        synchronized (subscriptions) {
            subscriptions.add(s);
        }
        return s;
    }

    private <T> T awaitConnection(CompletionStage<T> f, String what) {
        try {
            return f.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.toCompletableFuture().cancel(true);
            throw unreachable(what, e);
        } catch (ExecutionException e) {
            throw failure(what, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCode.FAILED, "interrupted while connecting to " + where, e);
        }
    }

    StatefulRedisConnection<String, String> connection() {
        return connection;
    }

    RedisAsyncCommands<String, String> commands() {
        return connection.async();
    }

    Duration timeout() {
        return timeout;
    }

    /** @return the server, for messages: {@code redis://127.0.0.1:6379}, or the sentinels and the master */
    String where() {
        return where;
    }

    /**
     * Waits for one answer of Redis at most the command timeout: no answer in time, or a lost connection, is
     * {@link ExitCode#UNREACHABLE}; an error Redis answered is {@link ExitCode#FAILED}.
     */
    <T> T await(RedisFuture<T> f, String what) {
        return awaitStage(f, what);
    }

    private <T> T awaitStage(CompletionStage<T> f, String what) {
        try {
            return f.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.toCompletableFuture().cancel(true);
            throw unreachable(what, e);
        } catch (ExecutionException e) {
            throw failure(what, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCode.FAILED, "interrupted while waiting for the " + what, e);
        }
    }

    /** Runs a read-only script of the tool's own ({@link RedisLayout}'s) on the keys {@code keys}. */
    <T> T eval(String script, ScriptOutputType type, String what, String[] keys, String... args) {
        return await(commands().eval(script, type, keys, args), what);
    }

    /** Runs a call of the provider, which bounds its own wait (by the command timeout), mapping its failures. */
    <T> T provider(java.util.function.Supplier<T> call, String what) {
        try {
            return call.get();
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCode.USAGE, e.getMessage(), e);
        } catch (DiscoException e) {
            throw failure(what, e);
        }
    }

    /** What a failed call means: the connection's loss or no answer (exit 4), or Redis's answer (exit 1). */
    CliFailure failure(String what, Throwable cause) {
        if (cause instanceof CliFailure f) {
            return f;
        }
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLException || t.getClass().getSimpleName().equals("NotSslRecordException")) {
                return new CliFailure(
                        ExitCode.UNREACHABLE,
                        "no answer from Redis at " + where + " to the " + what + ": the TLS handshake failed ("
                                + message(t) + ")"
                                + (uri.isSsl()
                                        ? ": check that the server speaks TLS (a plaintext server takes redis://, not"
                                                + " rediss://) and that the JVM's trust store trusts its certificate"
                                        : ""),
                        cause);
            }
        }
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException
                    || t instanceof RedisCommandTimeoutException
                    || t instanceof RedisConnectionException
                    || t instanceof IOException
                    || t instanceof RedisException && isDisconnected(t)) {
                return unreachable(what, cause);
            }
        }
        String m = message(cause);
        if (m.contains("NOAUTH") || m.contains("WRONGPASS") || m.contains("NOPERM")) {
            m += " (give the user and password in the URI: redis://user:password@host:port)";
        }
        return new CliFailure(ExitCode.FAILED, "Redis at " + where + " failed the " + what + ": " + m, cause);
    }

    private static boolean isDisconnected(Throwable t) {
        String m = String.valueOf(t.getMessage());
        return m.contains("not connected") || m.contains("Connection closed") || m.contains("Connection reset");
    }

    private static String message(Throwable t) {
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** No answer in time: names the server and, per host, why (refused, unknown host, ...). */
    CliFailure unreachable(String what, Throwable cause) {
        return new CliFailure(
                ExitCode.UNREACHABLE,
                "no answer from Redis at " + where + " within " + Etcd.millis(timeout) + " to the " + what + ": "
                        + diagnose() + " (--command-timeout waits longer)",
                cause);
    }

    /** Why each server (the server, or each sentinel) does not answer, from a plain TCP connection to it. */
    private String diagnose() {
        int ms = (int) Math.min(1000, Math.max(200, timeout.toMillis() / 2));
        List<RedisURI> servers = uri.getSentinels().isEmpty() ? List.of(uri) : uri.getSentinels();
        return servers.stream()
                .map(s -> s.getHost() + ":" + s.getPort() + ": " + probe(s.getHost(), s.getPort(), ms, uri.isSsl()))
                .collect(Collectors.joining("; "));
    }

    /**
     * Why {@code host:port} does not answer: a plain TCP connection to it, and with {@code tls} a plaintext
     * {@code PING} on it (a server that answers it does not speak TLS: Lettuce's TLS handshake with it waits for an
     * answer that never comes).
     */
    private static String probe(String host, int port, int ms, boolean tls) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), ms);
            if (tls) {
                s.setSoTimeout(ms);
                s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                int first = -1;
                try {
                    first = s.getInputStream().read();
                } catch (SocketTimeoutException e) {
                    // no plaintext answer either
                }
                if (first == '+' || first == '-') {
                    return "the TLS handshake got no answer, but the server answers PING in plaintext: it does not"
                            + " speak TLS (a plaintext server takes redis://, not rediss://)";
                }
            }
            return "accepts connections but did not answer in time (a frozen or busy server, or not Redis"
                    + (tls ? ", or no TLS handshake" : "") + ")";
        } catch (UnknownHostException e) {
            return "unknown host";
        } catch (SocketTimeoutException e) {
            return "no answer to a TCP connection within " + ms + " ms (the host is down, or a firewall drops it)";
        } catch (java.net.ConnectException e) {
            return "connection refused, nothing listens on the port";
        } catch (IOException | IllegalArgumentException e) {
            return message(e);
        }
    }

    /** @return the URI for messages, without a password */
    static String describe(RedisURI uri) {
        if (!uri.getSentinels().isEmpty()) {
            return (uri.isSsl() ? "rediss-sentinel://" : "redis-sentinel://")
                    + uri.getSentinels().stream()
                            .map(s -> s.getHost() + ":" + s.getPort())
                            .collect(Collectors.joining(","))
                    + "#" + uri.getSentinelMasterId();
        }
        return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort();
    }

    @Override
    public String backend() {
        return "Redis";
    }

    /** {@link RedisLayout#detect}: from the claims' kinds, else the token record's markers. */
    @Override
    public Optional<Primitive> detect(String name) {
        return RedisLayout.detect(this, name);
    }

    @Override
    public String nothingHolds(String name) {
        return RedisLayout.nothingHolds(name);
    }

    /**
     * Who holds and waits for {@code name}: the provider's own listing, without a session; then each claim key's time
     * to live, for the {@code TTL} column.
     */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        String what = "listing of the claimants of " + name;
        List<Claimant> listed = provider(() -> RedisSession.claimants(connection, primitive, name, timeout), what);
        ttls(listed);
        return listed;
    }

    /** Reads the time to live of each claim's key (pipelined), remembering it by key and by owner. */
    void ttls(List<Claimant> claimants) {
        List<RedisFuture<Long>> pttls = new ArrayList<>();
        for (Claimant c : claimants) {
            pttls.add(commands().pttl(redisKey(c.key())));
        }
        for (int i = 0; i < claimants.size(); i++) {
            Claimant c = claimants.get(i);
            long pttl = await(pttls.get(i), "read of the time to live of " + c.key());
            TtlReading reading = new TtlReading(pttl, System.nanoTime());
            // a key that went between the listing and this read (-2) keeps the last reading that saw it: how it
            // went (expired, or released) is judged from that one
            ttlByKey.merge(c.key(), reading, (was, now) -> now.pttl() == -2 ? was : now);
            pttlByOwner.merge(c.leaseId(), pttl, (a, b) -> a < 0 || b < 0 ? Math.min(a, b) : Math.min(a, b));
        }
    }

    /**
     * @return the claim key's last time to live read while it was there (ms: -1 none; -2 gone, only if it never was),
     *     with when; empty when never listed
     */
    Optional<TtlReading> ttl(String key) {
        return Optional.ofNullable(ttlByKey.get(key));
    }

    /** Forgets the readings of a claim key that is gone. */
    void forget(String key) {
        ttlByKey.remove(key);
    }

    /**
     * A claim key's time to live as read.
     *
     * @param pttl ms: -1 none, -2 gone
     * @param atNanos when it was read ({@code System.nanoTime()})
     */
    record TtlReading(long pttl, long atNanos) {}

    /** @return the Redis key {@code disco:{<name>}:c:<id>} of a claimant's key {@code <name>/<id>} */
    static String redisKey(String key) {
        return RedisKeys.parseClaim(key)
                .map(p -> RedisKeys.claim(p[0], p[1]))
                .orElseThrow(() -> new CliFailure(ExitCode.FAILED, key + " is not a claim's key on Redis"));
    }

    /** Names on Redis do not nest: every name's keys are its own ({@code disco:{<name>}:...}). */
    @Override
    public boolean isClaimOf(Primitive primitive, String name, String key) {
        return RedisKeys.parseClaim(key).map(p -> p[0].equals(name)).orElse(false);
    }

    @Override
    public String nameOf(Primitive primitive, String name, String key) {
        return name;
    }

    /**
     * The time the claims of owner {@code leaseId} have left, as their keys' TTL said when listed (they are renewed
     * together): {@code 27s}, {@code expired}, {@code none} for a key without a TTL (see {@code disco leftovers}).
     */
    @Override
    public String ttlLeft(long leaseId) {
        Long pttl = pttlByOwner.get(leaseId);
        if (pttl == null) {
            return "?";
        }
        if (pttl == -1) {
            return "none";
        }
        return pttl < 0 ? "expired" : pttl / 1000 + "s";
    }

    /** Closes the connections and the client, waiting at most the command timeout. */
    @Override
    public void close() {
        try {
            client.shutdown(Duration.ZERO, timeout); // with every connection it opened
        } catch (RuntimeException e) {
            // closing: nothing more to do
        } finally {
            resources.shutdown(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}

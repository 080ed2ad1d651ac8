package io.disco.core;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Who made a claim (a lock, read/write lock or semaphore key): the value this library writes into
 * the claim's key when it creates it, as one small JSON object that {@code etcdctl get} shows, for
 * example
 * <pre>{"host":"web-3","pid":4711,"client":"orders","thread":"http-nio-8080-exec-7","claimedAt":"2026-12-05T07:30:00.123Z"}</pre>
 *
 * <p>{@code claimedAt} is the wall-clock time at which the claim was <em>created</em>: for a claim
 * that did not have to wait it is when it was acquired; for one that waited, when it started waiting
 * (a claim's value is written once, when its key is created: no write is added to a hand-over for
 * it). Wall clocks of different hosts differ: it is for people, never for ordering; the fencing token
 * orders.
 *
 * <p>Keys written by other clients carry other values: etcd's Go recipes and {@code etcdctl lock}
 * write an empty value ({@link Source#EMPTY}); anything that is not such a JSON object reads as
 * {@link Source#UNKNOWN}. Reading never fails. An election's key holds the candidate's value, which
 * is the user's: no metadata is written there.
 *
 * @param source where the value came from
 * @param host the claimant's host name; empty if not known
 * @param pid the claimant's process id; 0 if not known
 * @param clientId the id the application gave its client (empty by default)
 * @param thread the name of the thread that asked; empty if not known
 * @param claimedAt when the claim's key was created, on the claimant's wall clock; empty if not known
 */
public record ClaimMetadata(
        Source source, String host, long pid, String clientId, String thread, Optional<Instant> claimedAt) {

    /** What a claim's value turned out to be. */
    public enum Source {
        /** This library's JSON: the fields are the claimant's. */
        DISCO,
        /** An empty value: a claim of another client (etcd's Go recipes, {@code etcdctl lock}), or an election's. */
        EMPTY,
        /** A value that is not this library's JSON (another client's data, or damaged): the fields are empty. */
        UNKNOWN
    }

    /** The metadata of an empty value. */
    public static final ClaimMetadata EMPTY = new ClaimMetadata(Source.EMPTY, "", 0, "", "", Optional.empty());

    /** The metadata of a value that is not this library's JSON. */
    public static final ClaimMetadata UNKNOWN = new ClaimMetadata(Source.UNKNOWN, "", 0, "", "", Optional.empty());

    /**
     * Checks the components.
     *
     * @param source where the value came from
     * @param host the claimant's host name; empty if not known
     * @param pid the claimant's process id; 0 if not known
     * @param clientId the id the application gave its client
     * @param thread the name of the thread that asked; empty if not known
     * @param claimedAt when the claim's key was created; empty if not known
     * @throws NullPointerException if a component is null
     */
    public ClaimMetadata {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(thread, "thread");
        Objects.requireNonNull(claimedAt, "claimedAt");
    }

    /** Field names of the JSON; {@code token} is written by providers that record a holder's token in the value. */
    static final String HOST = "host";

    static final String PID = "pid";
    static final String CLIENT = "client";
    static final String THREAD = "thread";
    static final String CLAIMED_AT = "claimedAt";

    /** The name of the field in which a provider may record the holder's fencing token (see {@link #tokenIn}). */
    public static final String TOKEN = "token";

    /**
     * The name of the field in which a provider may record when the hold began, next to the token (see
     * {@link #heldSinceIn}): for a claim that waited, later than its {@code claimedAt}.
     */
    public static final String HELD_SINCE = "heldSince";

    /**
     * The metadata of a claim made now by the calling thread of this process.
     *
     * @param clientId the application's client id (may be empty)
     * @return the metadata, source {@link Source#DISCO}
     */
    public static ClaimMetadata ofCurrentThread(String clientId) {
        return new ClaimMetadata(
                Source.DISCO,
                thisHost(),
                THIS_PID,
                clientId,
                Thread.currentThread().getName(),
                Optional.of(Instant.now()));
    }

    /**
     * The same process and client, for a claim made now by the calling thread: this metadata's host,
     * pid and client id with the calling thread's name and the current time. Looks nothing up, unlike
     * {@link #ofCurrentThread}, whose first call may look up the host's name.
     *
     * @return the metadata of a claim made now
     */
    public ClaimMetadata now() {
        return new ClaimMetadata(
                source, host, pid, clientId, Thread.currentThread().getName(), Optional.of(Instant.now()));
    }

    /** @return this metadata without its time (to compare claims made at different moments) */
    public ClaimMetadata withoutTime() {
        return new ClaimMetadata(source, host, pid, clientId, thread, Optional.empty());
    }

    /** @return the JSON this metadata is written as (the fields of {@link Source#DISCO} metadata) */
    public String toJson() {
        return json().end();
    }

    /**
     * @param token the holder's fencing token
     * @param heldSince when the hold began (this host's clock)
     * @return the JSON of this metadata with the {@code token} and {@code heldSince} fields added
     */
    public String toJson(long token, Instant heldSince) {
        return json().field(TOKEN, token)
                .field(HELD_SINCE, heldSince.toString())
                .end();
    }

    private FlatJson json() {
        FlatJson j = FlatJson.object()
                .field(HOST, host)
                .field(PID, pid)
                .field(CLIENT, clientId)
                .field(THREAD, thread);
        claimedAt.ifPresent(t -> j.field(CLAIMED_AT, t.toString()));
        return j;
    }

    /**
     * Reads a claim's value. Never throws.
     *
     * @param value the key's value as text (null reads as empty)
     * @return {@link #EMPTY} for an empty value; {@link #UNKNOWN} for one that is not a JSON object
     *     with at least a {@code host} or a {@code pid}; else the fields found (missing ones empty)
     */
    public static ClaimMetadata parse(String value) {
        if (value == null || value.isEmpty()) {
            return EMPTY;
        }
        Optional<Map<String, Object>> read = FlatJson.parse(value);
        if (read.isEmpty() || !(read.get().containsKey(HOST) || read.get().containsKey(PID))) {
            return UNKNOWN;
        }
        Map<String, Object> f = read.get();
        // a time that does not parse is left empty: the other fields still say who
        return new ClaimMetadata(
                Source.DISCO,
                text(f, HOST),
                f.get(PID) instanceof Long p ? p : 0,
                text(f, CLIENT),
                text(f, THREAD),
                instant(f, CLAIMED_AT));
    }

    /**
     * When the hold began, if a provider recorded it in a claim's value (with the token, after a claim that
     * waited).
     *
     * @param value the key's value as text (null reads as none)
     * @return the time, or empty (no such field, not JSON, or not an ISO-8601 instant)
     */
    public static Optional<Instant> heldSinceIn(String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        return FlatJson.parse(value).flatMap(f -> instant(f, HELD_SINCE));
    }

    private static Optional<Instant> instant(Map<String, Object> f, String name) {
        if (f.get(name) instanceof String s) {
            try {
                return Optional.of(Instant.parse(s));
            } catch (DateTimeParseException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /**
     * The holder's fencing token recorded in a claim's value, if a provider wrote one there.
     *
     * @param value the key's value as text (null reads as none)
     * @return the token, or empty (no such field, not JSON, or not a positive integer)
     */
    public static Optional<Long> tokenIn(String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        return FlatJson.parse(value)
                .map(f -> f.get(TOKEN))
                .filter(t -> t instanceof Long l && l > 0)
                .map(t -> (Long) t);
    }

    private static String text(Map<String, Object> f, String name) {
        return f.get(name) instanceof String s ? s : "";
    }

    /** This process's pid (no I/O: fine in the class initializer). */
    private static final long THIS_PID = ProcessHandle.current().pid();
    /**
     * This process's host name, null until the first claim looks it up. Not in a class initializer: a
     * name lookup can take seconds, and every thread that needs a class being initialized waits for it,
     * a virtual thread pinned to its carrier (on JDK 25 too), so a lookup there could stall every
     * virtual thread of the application. Two first claims may both look it up: the same name, twice.
     */
    private static volatile String thisHost;

    private static String thisHost() {
        String host = thisHost;
        if (host == null) {
            host = hostName();
            thisHost = host;
        }
        return host;
    }

    /** The environment's name first (no lookup), then the local address's name; empty if neither is known. */
    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | RuntimeException e) {
            return "";
        }
    }
}

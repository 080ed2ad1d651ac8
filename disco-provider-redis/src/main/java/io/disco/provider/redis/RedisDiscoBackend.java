package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Redis behind the client with the test hooks ({@code Disco.over(backend)}), for tests, demos and fault runs; an
 * application's client runs through {@link RedisProvider} instead. Every {@link #open()} opens a {@link RedisSession}
 * (the same owner as the application's client's) on the caller's Lettuce client, with connections of its own.
 *
 * <p>The test hooks ({@link TestableBackend}):
 * <ul>
 *   <li>{@link #freeze} stops the owner's renewals, as a stopped process's: its claims expire on the server after the
 *       TTL, and the owner, hearing nothing, declares itself lost by its own deadline; it sends nothing more in the
 *       background (no clean-up of what it held);</li>
 *   <li>{@link #deleteKey} deletes a claim as {@code disco break} does ({@code break.lua}: the claim, its semaphore
 *       slot, a wake-up of the claims now admitted) and announces it on {@link RedisKeys#GONE_CHANNEL}, where its
 *       owner hears it at once (a plain {@code DEL} is found by the owner's next renewal, within a third of the
 *       TTL);</li>
 *   <li>{@link #endOwner} and {@link #endOwnerOf} end an owner from outside: every claim of it (found by a
 *       {@code SCAN} of the claim keys) is deleted so, and the end is announced ({@code o <owner>}), on which the
 *       owner declares itself lost, as an etcd owner whose lease was revoked does. Any owner can be ended, this
 *       backend's or another process's;</li>
 *   <li>{@link #keys}, {@link #ownerOf} read through an admin connection this backend opens on first use and
 *       {@link #close()} closes.</li>
 * </ul>
 */
public final class RedisDiscoBackend implements TestableBackend {

    private final Deployment deployment;
    private final RedisOptions options;
    private final Hooks hooks;
    private final boolean root;

    /** What a backend and its {@link #withTtl} backends share: the admin connection. */
    private static final class Hooks {
        private Link admin;
        private boolean closed;
        final Set<RedisSession> owners = ConcurrentHashMap.newKeySet();

        synchronized Link admin(Deployment deployment, Duration timeout) {
            if (closed) {
                throw new IllegalStateException("the RedisDiscoBackend is closed");
            }
            if (admin == null) {
                admin = deployment.connect(timeout);
            }
            return admin;
        }

        void close() {
            Link toClose;
            synchronized (this) {
                closed = true;
                toClose = admin;
            }
            if (toClose != null) {
                toClose.close(); // waits for its connections: outside the monitor
            }
        }
    }

    private RedisDiscoBackend(Deployment deployment, RedisOptions options, Hooks hooks, boolean root) {
        this.deployment = deployment;
        this.options = options;
        this.hooks = hooks;
        this.root = root;
    }

    /**
     * @param client the caller's Lettuce client; never shut down here
     * @param uri the server, or the sentinels and the master's name
     * @param options the sessions' options (their TTL is the owners' time to live)
     * @return the backend
     * @throws NullPointerException if an argument is null
     */
    public static RedisDiscoBackend over(RedisClient client, RedisURI uri, RedisOptions options) {
        return new RedisDiscoBackend(
                Deployment.of(client, uri), Objects.requireNonNull(options, "options"), new Hooks(), true);
    }

    /**
     * @param client the caller's Lettuce cluster client; never shut down here
     * @param options the sessions' options
     * @return the backend
     * @throws NullPointerException if an argument is null
     */
    public static RedisDiscoBackend over(RedisClusterClient client, RedisOptions options) {
        return new RedisDiscoBackend(
                Deployment.of(client), Objects.requireNonNull(options, "options"), new Hooks(), true);
    }

    /**
     * Opens a session, waiting at most the options' connect timeout.
     *
     * @return the owner
     * @throws DiscoException if Redis could not be reached in time, or the start check refuses it
     */
    @Override
    public RedisSession open() {
        RedisSession s = RedisSession.open(deployment, options);
        hooks.owners.add(s);
        s.done().whenComplete((v, e) -> hooks.owners.remove(s));
        return s;
    }

    /**
     * Starts a leadership runner on {@code name}: each attempt {@linkplain #open() opens} a session of its own and
     * campaigns with an election on it; closing the attempt's election closes that session.
     *
     * @param name the election's name
     * @param options the runner's options
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     */
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options) {
        String checked = RedisKeys.checkName(name);
        Objects.requireNonNull(options, "options");
        return LeadershipRunner.start(
                checked,
                () -> {
                    RedisSession owner = open();
                    try {
                        return owner.newElection(checked, owner::close);
                    } catch (RuntimeException e) {
                        owner.close();
                        throw e;
                    }
                },
                options);
    }

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return withTtl(ttl).newLeadershipRunner(name, options);
    }

    @Override
    public String describe() {
        return deployment.describe();
    }

    /** The options' owner wait; by default the TTL. */
    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElse(options.ttl());
    }

    /**
     * This backend with owners of the time to live {@code ttl}; it shares this backend's admin connection.
     *
     * @throws IllegalArgumentException if {@code ttl} is out of {@link RedisOptions.Builder#ttl}'s range
     */
    @Override
    public RedisDiscoBackend withTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.equals(options.ttl())) {
            return this;
        }
        return new RedisDiscoBackend(deployment, options.toBuilder().ttl(ttl).build(), hooks, false);
    }

    /** Stops the owner's renewals (see the class description). */
    @Override
    public void freeze(Owner owner) {
        own(owner).core().liveness().freeze();
    }

    @Override
    public void endOwner(Owner owner) {
        endOwner(own(owner).core().ownerText());
    }

    @Override
    public void endOwnerOf(String key) {
        String owner = field(key, "owner")
                .orElseThrow(() -> new IllegalStateException(key + " is absent or belongs to no owner"));
        endOwner(owner);
    }

    private void endOwner(String ownerText) {
        Link admin = admin();
        java.util.Map<String, List<String>> byName = new java.util.HashMap<>();
        for (String key : allClaimKeys(admin)) {
            if (field(key, "owner").filter(ownerText::equals).isPresent()) {
                String[] parsed = RedisKeys.parseClaim(key).orElseThrow();
                byName.computeIfAbsent(parsed[0], n -> new ArrayList<>()).add(parsed[1]);
            }
        }
        for (var e : byName.entrySet()) { // per name at once: nobody is admitted between two deletions
            List<String> args = new ArrayList<>();
            args.add("0");
            args.addAll(e.getValue());
            Calls.get(
                    Scripts.BREAK.run(admin.commands(), e.getKey(), args.toArray(String[]::new)),
                    options.requestTimeout(),
                    describe(),
                    "deleting the claims of owner " + ownerText + " on " + e.getKey());
        }
        Calls.get(
                admin.commands().publish(RedisKeys.GONE_CHANNEL, "o " + ownerText),
                options.requestTimeout(),
                describe(),
                "announcing the end of owner " + ownerText);
    }

    /**
     * The claim keys of {@code name}, holders' and waiters' (the listing's keys) and the live double barrier
     * participants' ({@code participants.lua}), as {@code <name>/<claim id>}, sorted. A barrier's key belongs to no
     * owner: it is not among them.
     */
    @Override
    public List<String> keys(String name) {
        List<String> keys = new ArrayList<>();
        for (var c : RedisClaimantListing.list(
                admin().commands(), describe(), io.disco.core.Primitive.LOCK, name, options.requestTimeout())) {
            keys.add(c.key());
        }
        List<Object> participants = Calls.get(
                Scripts.PARTICIPANTS.run(admin().commands(), name),
                options.requestTimeout(),
                describe(),
                "listing the double barrier participants of " + name);
        for (int i = 0; i + 1 < participants.size(); i += 2) {
            keys.add(RedisKeys.grantKey(name, String.valueOf(participants.get(i))));
        }
        Collections.sort(keys);
        return keys;
    }

    @Override
    public void deleteKey(String key) {
        breakClaim(admin(), key, true);
    }

    /** The owner id, in hex, recorded in the claim {@code key}; empty when it is absent. */
    @Override
    public Optional<String> ownerOf(String key) {
        return field(key, "owner").map(o -> Long.toHexString(Long.parseLong(o)));
    }

    /** Lettuce's threads, and the sessions' ({@code disco-redis-*}). */
    /** @return false: each name's keys are in a hash slot of their own, so nested names never exclude each other */
    @Override
    public boolean nestedNamesExclude() {
        return false;
    }

    @Override
    public boolean isBackendThread(Thread thread) {
        String name = thread.getName();
        return name.startsWith("disco-redis-") || name.startsWith("lettuce-");
    }

    /** Closes the admin connection; on a {@link #withTtl} backend, nothing. Never an owner. */
    @Override
    public void close() {
        if (root) {
            hooks.close();
        }
    }

    private Link admin() {
        return hooks.admin(deployment, options.connectTimeout());
    }

    private void breakClaim(Link admin, String key, boolean announce) {
        String[] parsed = RedisKeys.parseClaim(key)
                .orElseThrow(() -> new IllegalArgumentException(key + " is not a claim's key"));
        Calls.get(
                Scripts.BREAK.run(admin.commands(), parsed[0], announce ? "1" : "0", parsed[1]),
                options.requestTimeout(),
                describe(),
                "deleting " + key);
    }

    private Optional<String> field(String key, String field) {
        String[] parsed = RedisKeys.parseClaim(key)
                .orElseThrow(() -> new IllegalArgumentException(key + " is not a claim's key"));
        String redisKey = RedisKeys.claim(parsed[0], parsed[1]);
        return Optional.ofNullable(Calls.get(
                admin().commands().hget(redisKey, field), options.requestTimeout(), describe(), "reading " + key));
    }

    private List<String> allClaimKeys(Link admin) {
        List<String> keys = new ArrayList<>();
        ScanArgs match = ScanArgs.Builder.matches(RedisKeys.PREFIX + "{*}:c:*").limit(1000);
        for (Link.Node node : admin.primaries()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = Calls.get(
                        node.commands().scan(cursor, match), options.requestTimeout(), describe(), "scanning");
                keys.addAll(page.getKeys());
                cursor = page;
            } while (!cursor.isFinished());
        }
        return keys;
    }

    private RedisSession own(Owner owner) {
        Objects.requireNonNull(owner, "owner");
        if (!(owner instanceof RedisSession s)
                || !hooks.owners.contains(s) && !s.done().toCompletableFuture().isDone()) {
            throw new IllegalArgumentException(owner + " is not an owner of this Redis backend");
        }
        return s;
    }
}

package io.disco.provider.redis;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * {@link ElectionService} on Redis: a candidate is a claim of kind {@code e} whose value is the candidate's; the first
 * live candidate in queue order leads, its term's token the name's next token, assigned when it is admitted. The
 * term's start and every {@link #proclaim} (which rewrites the claim's value, guarded by its owner and token) are
 * appended to the election's log ({@link RedisKeys#log}), which observations read ({@link RedisObservation});
 * {@link #leader()} reads the first admitted candidate. The grant's lifecycle is {@link RedisQueueService}'s.
 */
final class RedisElectionService extends RedisQueueService<Leadership, LeadershipLostException>
        implements ElectionService {

    private final Runnable afterClose;
    private final AtomicBoolean afterClosed = new AtomicBoolean();
    private final Object proclaiming = new Object();
    private final List<RedisObservation> observations = new ArrayList<>();

    private RedisElectionService(SessionCore core, String name, Runnable afterClose) {
        super(core, name, Primitive.ELECTION, "election");
        this.afterClose = afterClose;
    }

    static RedisElectionService create(SessionCore core, String name, Runnable afterClose) {
        String checked = RedisKeys.checkName(name);
        return core.register(checked, false, () -> new RedisElectionService(core, checked, afterClose));
    }

    @Override
    Leadership grant(String key, ClaimKind kind, long token, int slot, String value) {
        return new Leadership(key, value, FencingToken.of(token));
    }

    @Override
    LeadershipLostException lostException(String message, Throwable cause) {
        return new LeadershipLostException(message, cause);
    }

    @Override
    public Leadership campaign(String value) throws InterruptedException {
        Objects.requireNonNull(value, "value");
        Optional<Leadership> held = held();
        if (held.isPresent()) {
            return value.equals(held.get().value()) ? held.get() : proclaim(value);
        }
        try {
            return acquire(ClaimKind.LEADER, null, "election.campaign()", value);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(value, "value");
        requireTimeout(timeout);
        Optional<Leadership> held = held();
        if (held.isPresent()) {
            return value.equals(held.get().value()) ? held.get() : proclaim(value);
        }
        return acquire(ClaimKind.LEADER, timeout, "election.campaign()", value);
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        Objects.requireNonNull(value, "value");
        Optional<Leadership> held = held();
        if (held.isPresent() && !value.equals(held.get().value())) {
            return proclaimAsync(value);
        }
        return acquireAsync(ClaimKind.LEADER, value);
    }

    @Override
    public Leadership proclaim(String value) {
        Objects.requireNonNull(value, "value");
        SessionThread.refuseOnSessionThread("election.proclaim()");
        synchronized (proclaiming) {
            HeldClaim<Leadership> h = heldClaim();
            if (h == null) {
                throw new NotLeaderException("this candidate does not lead the election on " + name);
            }
            List<Object> answer = Calls.get(
                    Scripts.PROCLAIM.run(core.link().commands(), name, h.id(), core.ownerText(), h.tokenText(), value),
                    core.requestTimeout(),
                    core.where(),
                    "proclaiming in the election on " + name);
            if (!"proclaimed".equals(String.valueOf(answer.get(0)))) {
                heldClaimGone(h.key(), "its claim " + h.key() + " was gone when it proclaimed");
                throw new NotLeaderException("the claim " + h.grant().key()
                        + " of this candidate's term in the election on " + name + " is gone: the term ended");
            }
            Leadership next = h.grant().withValue(value);
            replaceHeld(h.grant(), next); // false: resigned meanwhile; the proclamation still applied to this term
            return next;
        }
    }

    @Override
    public CompletableFuture<Leadership> proclaimAsync(String value) {
        Objects.requireNonNull(value, "value");
        return supplyInBackground(() -> proclaim(value));
    }

    @Override
    public void resign() {
        release(ClaimKind.LEADER, "election.resign()");
    }

    @Override
    public CompletableFuture<Void> resignAsync() {
        return releaseAsync(ClaimKind.LEADER, "election.resign()");
    }

    @Override
    public Optional<Leadership> leader() {
        if (closed()) {
            throw new IllegalStateException("the election on " + name + " is closed");
        }
        for (Claimant c : RedisClaimantListing.list(
                core.link().commands(), core.where(), Primitive.ELECTION, name, core.requestTimeout())) {
            if (c.role() == Claimant.Role.HOLDER) {
                return Optional.of(new Leadership(c.key(), c.value(), c.token().orElseThrow()));
            }
        }
        return Optional.empty();
    }

    @Override
    public Observation observe(Consumer<Leadership> listener) {
        Objects.requireNonNull(listener, "listener");
        RedisObservation o;
        synchronized (observations) {
            if (closed()) {
                throw new IllegalStateException("the election on " + name + " is closed");
            }
            o = new RedisObservation(core, name, listener, this::forget);
            observations.add(o);
        }
        return o.start();
    }

    private void forget(RedisObservation o) {
        synchronized (observations) {
            observations.remove(o);
        }
    }

    /** Resigns if leading, withdraws a pending campaign, stops every observation; then closes an owned session. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            List<RedisObservation> toClose;
            synchronized (observations) {
                toClose = new ArrayList<>(observations);
            }
            toClose.forEach(RedisObservation::close);
            if (afterClose != null && afterClosed.compareAndSet(false, true)) {
                afterClose.run();
            }
        }
    }
}

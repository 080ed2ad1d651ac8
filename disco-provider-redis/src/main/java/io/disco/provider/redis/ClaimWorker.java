package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The worker of one {@link QueueClaim}: once the service's last release is confirmed ({@link ClaimRelease}), it
 * enqueues the claim and asks for its admission ({@link GrantStep}), registers the claim for renewal, listens to the
 * name's channel ({@link Wakeups}) once told to wait (before the first request only if the name's subscription is
 * confirmed already: a claim admitted at once costs no subscription), and while the claim is not admitted waits, without polling,
 * for whichever comes first: a message that admits it, the instant the soonest claim ahead of it would expire (the
 * script tells it: a holder that died publishes nothing), or the bounded fallback ({@code min(ttl, 5 s)}, for a lost
 * message); then asks again. Admitted, it has the service commit the grant. Every other way out withdraws the claim
 * (sent until answered, for as long as the claim could live) before the attempt's {@code withdrawn} completes.
 *
 * @param <G> the grant
 */
final class ClaimWorker<G extends Fenced> implements Runnable {

    /** The longest wait between two checks of a waiting claim, whatever the messages say. */
    private static final long MAX_POLL_MS = 5_000;
    /** A little past a blocker's expiry, so that the server has expired it. */
    private static final long EXPIRY_SLACK_MS = 5;

    private final AttemptOwner<G> service;
    private final QueueClaim<G> a;

    ClaimWorker(AttemptOwner<G> service, QueueClaim<G> attempt) {
        this.service = service;
        this.a = attempt;
    }

    @Override
    public void run() {
        SessionCore core = service.core();
        boolean maybeCreated = false;
        boolean committed = false;
        boolean listening = false;
        try {
            if (a.future.isDone() || !awaitReleaseConfirmed()) {
                return; // no claim before the service's last release is confirmed (issue 44)
            }
            // listening before the first request only where the name's subscription is confirmed already: an
            // acquisition admitted at once never subscribes
            listening = core.wakeups().listenIfSubscribed(service.name, a.id, a.wake::release);
            boolean create = true;
            boolean registered = false;
            long poll = Math.min(MAX_POLL_MS, core.ttl().toMillis());
            while (!a.future.isDone()) {
                GrantStep.Answer answer;
                if (create && core.state() != SessionStatus.State.LIVE) {
                    a.future.completeExceptionally(new IllegalStateException(
                            "the session of the " + service.what() + " on " + service.name + " ended"));
                    return;
                }
                try {
                    maybeCreated |= create;
                    answer = GrantStep.send(core, service.name, a, service.limit(), create, core.requestTimeout());
                } catch (TimeoutException e) {
                    continue; // the same claim again (the same id): the script adopts what a lost copy made
                }
                if (answer instanceof GrantStep.Gone) {
                    if (!create) {
                        service.claimGone(
                                a.key,
                                "its claim " + a.key + " was gone while it waited (deleted by somebody else, or"
                                        + " expired)");
                        a.future.completeExceptionally(service.lost("its claim " + a.key + " is gone", null));
                    } else {
                        a.future.completeExceptionally(new DiscoException(core.where() + " refused to enqueue " + a.key
                                + ": a claim of another owner has its id"));
                    }
                    return;
                }
                create = false;
                if (!registered) {
                    core.liveness().register(a.key, reason -> service.claimGone(a.key, reason));
                    registered = true;
                }
                if (answer instanceof GrantStep.Admitted ad) {
                    G grant = service.grant(a.grantKey, a.kind, ad.token(), ad.slot(), a.value);
                    committed = service.commit(a, grant, ad.tokenText());
                    return;
                } else if (answer instanceof GrantStep.Wait w) {
                    if (a.tryOnly) {
                        a.future.complete(null);
                        return;
                    }
                    if (!listening) {
                        // told to wait before listening: a wake-up published since that answer would be lost, so
                        // ask once more, at once if the subscription is confirmed already, else when its
                        // confirmation wakes this worker (see Wakeups)
                        listening = true;
                        if (core.wakeups().listen(service.name, a.id, a.wake::release)) {
                            continue;
                        }
                    }
                    long ms = w.pttl() >= 0 ? Math.min(poll, w.pttl() + EXPIRY_SLACK_MS) : poll;
                    if (a.wake.tryAcquire(ms, TimeUnit.MILLISECONDS)) {
                        a.wake.drainPermits();
                    }
                } else if (a.wake.tryAcquire(50, TimeUnit.MILLISECONDS)) { // Retry: the lineage settles
                    a.wake.drainPermits();
                }
            }
        } catch (InterruptedException e) {
            a.future.completeExceptionally(new DiscoException(
                    "the worker of the " + service.what() + " on " + service.name + " was interrupted", e));
        } catch (RuntimeException e) {
            a.future.completeExceptionally(e);
        } finally {
            if (listening) {
                core.wakeups().unlisten(service.name, a.id);
            }
            if (!committed && maybeCreated) {
                withdraw(core, service.name, a);
            }
            a.withdrawn.complete(null);
        }
    }

    /**
     * Waits until no release of the service is unconfirmed: only then may the attempt create its claim (issue 44).
     *
     * @return false if the attempt ended meanwhile
     */
    private boolean awaitReleaseConfirmed() throws InterruptedException {
        while (true) {
            if (!service.releaseUnconfirmed()) {
                return !a.future.isDone();
            }
            if (a.future.isDone()) {
                return false;
            }
            a.wake.acquire(); // released when the release is confirmed, and when the attempt ends
        }
    }

    /**
     * Withdraws a claim that was never handed out: renewed no more, then deleted by the release script (whatever its
     * state), sent until answered, for at most the TTL, after which, unrenewed, it has expired anyway.
     */
    static void withdraw(SessionCore core, String name, QueueClaim<?> a) {
        core.liveness().unregister(a.key);
        long until = System.nanoTime() + core.ttl().toNanos();
        long backoff = 100;
        boolean interrupted = Thread.interrupted();
        try {
            while (System.nanoTime() - until < 0 && !core.linkClosed()) {
                try {
                    Calls.await(
                            Scripts.RELEASE.run(core.link().commands(), name, a.id, core.ownerText(), "*"),
                            core.requestTimeout(),
                            core.where(),
                            "withdrawing " + a.key);
                    return;
                } catch (TimeoutException | RuntimeException e) {
                    try {
                        TimeUnit.MILLISECONDS.sleep(backoff);
                    } catch (InterruptedException ie) {
                        interrupted = true;
                        return;
                    }
                    backoff = Math.min(2_000, backoff * 2);
                } catch (InterruptedException e) {
                    interrupted = true;
                    return;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static Duration poll(Duration ttl) {
        return Duration.ofMillis(Math.min(MAX_POLL_MS, ttl.toMillis()));
    }
}

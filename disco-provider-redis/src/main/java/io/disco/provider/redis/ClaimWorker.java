package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * Where nothing stands before the first request, the calling thread sends it and an immediate grant is committed
 * where its answer arrives, without the worker ({@link #start}).
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

    // the worker's state: the thread that sent the first request, then the one that handles its answer, then the
    // worker's (each hands over to the next through the executor or the answer's future, which orders them)
    private boolean maybeCreated;
    private boolean committed;
    private boolean listening;
    private boolean create = true;
    private boolean registered;
    /** Whether the first request was sent before the worker ran ({@link #start}): its outcome is handled first. */
    private boolean firstSent;

    /** The first request's answer, when it was sent before the worker ran, or null. */
    private GrantStep.Answer firstAnswer;
    /** Whether the first request, sent before the worker ran, was not answered in time. */
    private boolean firstTimedOut;
    /** What the first request, sent before the worker ran, failed with (as the worker's request would), or null. */
    private RuntimeException firstError;

    ClaimWorker(AttemptOwner<G> service, QueueClaim<G> attempt) {
        this.service = service;
        this.a = attempt;
    }

    /**
     * Starts the acquisition {@code a}. Where nothing stands before its first request (no release to wait for, no
     * grant connection or replica acknowledgement, the lineage known), the calling thread sends that request, and a
     * claim admitted at once is committed where its answer arrives (on Lettuce's thread: the commit only completes
     * futures and queues the listeners' events); a worker runs only for what else the answer says (wait, retry,
     * gone, a failure) and to withdraw a claim nobody took. Otherwise a worker does it all.
     *
     * @throws java.util.concurrent.RejectedExecutionException if the session's workers are shut down (nothing sent)
     */
    static <G extends Fenced> void start(AttemptOwner<G> service, QueueClaim<G> a) {
        ClaimWorker<G> w = new ClaimWorker<>(service, a);
        SessionCore core = service.core();
        TokenLineage.Line line =
                core.grantsOnOwnConnection() ? null : core.lineage().cached("");
        if (line == null
                || service.releaseUnconfirmed()
                || a.future.isDone()
                || core.state() != SessionStatus.State.LIVE) {
            core.work(w);
            return;
        }
        CompletableFuture<List<Object>> answer;
        w.listening = core.wakeups().listenIfSubscribed(service.name, a.id, a.wake::release);
        try {
            answer = GrantStep.request(core.link().commands(), core, service.name, a, service.limit(), true, line);
        } catch (RuntimeException e) {
            if (w.listening) {
                core.wakeups().unlisten(service.name, a.id);
                w.listening = false;
            }
            core.work(w); // not sent: the worker sends it
            return;
        }
        w.firstSent = true;
        w.maybeCreated = true;
        answer.orTimeout(core.requestTimeout().toNanos(), TimeUnit.NANOSECONDS).whenComplete(w::firstAnswered);
    }

    /** The first request's outcome, on whatever thread it completed: a grant is committed here, the rest handed on. */
    private void firstAnswered(List<Object> raw, Throwable e) {
        SessionCore core = service.core();
        try {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof TimeoutException) {
                firstTimedOut = true;
            } else if (cause instanceof DiscoException d) {
                firstError = d;
            } else if (cause != null) {
                firstError =
                        new DiscoException(core.where() + " failed while acquiring " + a.key + ": " + cause, cause);
            } else {
                firstAnswer = GrantStep.interpret(core, service.name, a, service.limit(), raw, "");
            }
        } catch (RuntimeException ex) {
            firstError = ex; // refused: as the worker's request would throw it
        }
        if (firstAnswer instanceof GrantStep.Admitted ad && !a.future.isDone()) {
            try {
                create = false;
                core.liveness().register(a.key, reason -> service.claimGone(a.key, reason));
                registered = true;
                G grant = service.grant(a.grantKey, a.kind, ad.token(), ad.slot(), a.value);
                committed = service.commit(a, grant, ad.tokenText());
            } catch (RuntimeException ex) {
                a.future.completeExceptionally(ex);
            }
            if (committed) {
                if (listening) {
                    core.wakeups().unlisten(service.name, a.id);
                }
                a.withdrawn.complete(null);
                return;
            }
            firstAnswer = null; // not committed (given up meanwhile): the worker withdraws the claim
        }
        try {
            core.work(this);
        } catch (RuntimeException re) {
            // the session ended: no worker to withdraw the claim; deleted in the background (else it expires)
            a.future.completeExceptionally(new IllegalStateException(
                    "the session of the " + service.what() + " on " + service.name + " ended", re));
            if (listening) {
                core.wakeups().unlisten(service.name, a.id);
            }
            core.deleteInBackground(service.name, a.id);
            a.withdrawn.complete(null);
        }
    }

    @Override
    public void run() {
        SessionCore core = service.core();
        try {
            if (firstSent) {
                firstSent = false; // its outcome is handled below, first
            } else {
                if (a.future.isDone() || !awaitReleaseConfirmed()) {
                    return; // no claim before the service's last release is confirmed (issue 44)
                }
                // listening before the first request only where the name's subscription is confirmed already: an
                // acquisition admitted at once never subscribes
                listening = core.wakeups().listenIfSubscribed(service.name, a.id, a.wake::release);
            }
            boolean pending = firstAnswer != null || firstTimedOut || firstError != null;
            long poll = Math.min(MAX_POLL_MS, core.ttl().toMillis());
            while (!a.future.isDone()) {
                GrantStep.Answer answer;
                if (pending) {
                    pending = false;
                    if (firstError != null) {
                        throw firstError;
                    } else if (firstTimedOut) {
                        continue; // the same claim again (the same id): the script adopts what a lost copy made
                    }
                    answer = firstAnswer;
                } else {
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

package io.disco.chaos;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client workload: each owner process builds one {@link Disco} (the application's client, {@code Disco.healing} over {@link OwnerBackend#of})
 * and runs {@value #THREADS} threads on one lock name ({@code disco.lock(name)}), each looping tryLock (bounded by
 * {@link Owner#ACQUIRE}) → read → work → write(read + 1) → unlock. The threads of one process queue locally behind
 * one claim in the backend, and every hold must still have a token of its own: issue 44 found two threads of one
 * process holding with the same token (an unlock that timed out left its grant to the next thread) while another
 * process held the lock too.
 *
 * <p>A thread prints its events as owner {@code <owner>.t<j>} and its grants with the hold's identity,
 * {@code GRANT <token> main W <owner>.t<j>.h<n>} (its n-th hold), which is also the owner its resource calls name,
 * so that the checkers tell two holds apart inside one process ({@link SharedTokens}, {@link OverlappingHolds}).
 * A hold ends at the thread's {@code RELEASING}, or at {@code DONE <token>} when the lock's {@code done()}
 * completed first (the hold was lost), or at the process's {@code CLOSING} (SIGTERM closes the client).
 */
final class ClientLockWorkload implements Workload {

    /** The threads of each owner process on the one lock name. */
    static final int THREADS = 4;

    @Override
    public String name() {
        return "client-lock";
    }

    @Override
    public void own(Owner owner) throws Exception {
        Disco disco = Disco.healing(owner.backend);
        owner.closeOnExit(() -> {
            owner.say("CLOSING");
            disco.close();
        });
        FencedLock lock = disco.lock(owner.name);
        List<Thread> threads = new ArrayList<>();
        for (int j = 0; j < THREADS; j++) {
            String who = owner.id + ".t" + j;
            Thread t = new Thread(() -> loop(owner, disco, lock, who), "chaos-" + who);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /** One thread's loop, until the client is closed (SIGTERM) or the thread interrupted. */
    private static void loop(Owner owner, Disco disco, FencedLock lock, String who) {
        long holds = 0;
        while (true) {
            long asked = System.nanoTime();
            boolean granted;
            try {
                granted = lock.tryLock(Owner.ACQUIRE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (disco.status().state() == DiscoStatus.State.CLOSED) {
                    return; // SIGTERM closed the client: the process is ending
                }
                // a backend error; or an IllegalStateException of a client still open (a name's service closed under
                // the acquisition when its owner was lost), which the client's contract reserves for a closed client
                owner.say(who, "ERROR tryLock " + e.getClass().getSimpleName() + " " + e.getMessage());
                if (!pace(asked)) {
                    return;
                }
                continue;
            }
            if (!granted) {
                owner.say(who, "TIMEOUT");
                continue;
            }
            FencingToken token;
            try {
                token = lock.token();
            } catch (RuntimeException e) {
                // lost between the grant and now: nothing was held with a token; give the local hold up
                owner.say(who, "LOST token " + e.getClass().getSimpleName() + " " + e.getMessage());
                if (!unlock(owner, lock, who, null)) {
                    return;
                }
                continue;
            }
            HoldEnd end = new HoldEnd(owner, who);
            String hold = who + ".h" + ++holds;
            owner.say(who, "GRANT " + token.value() + " " + Owner.MAIN + " " + Observations.EXCLUSIVE + " " + hold);
            try {
                lock.done().whenComplete((v, e) -> end.say("DONE " + token.value()));
                owner.increment(who, hold, Owner.MAIN, token);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // the resource did not answer in time (the owner's calls are bounded)
                owner.say(who, "ERROR " + e.getClass().getSimpleName() + " " + e.getMessage());
            }
            end.say("RELEASING " + token.value());
            if (!unlock(owner, lock, who, token)) {
                return;
            }
        }
    }

    /**
     * Unlocks, and says {@code RELEASE} or what went wrong: a {@code LockLostException} ({@code LOST}), or a
     * backend error such as a release that timed out ({@code ERROR}; the client gives the local hold up all the
     * same, and the backend may apply the release later). A release the client refused leaves the thread holding
     * (its next {@code tryLock} would nest, with the same token): it is asked again until the thread holds
     * nothing, so that every {@code GRANT} is a new hold.
     *
     * @return false if interrupted
     */
    private static boolean unlock(Owner owner, FencedLock lock, String who, FencingToken token) {
        while (true) {
            long asked = System.nanoTime();
            try {
                lock.unlock();
                if (token != null) {
                    owner.say(who, "RELEASE " + token.value());
                }
            } catch (IllegalMonitorStateException e) {
                return true; // not held (any more)
            } catch (RuntimeException e) {
                owner.say(
                        who,
                        (e.getClass().getSimpleName().endsWith("LostException") ? "LOST unlock " : "ERROR unlock ")
                                + e.getClass().getSimpleName() + " " + e.getMessage());
            }
            if (!lock.isHeldByCurrentThread()) {
                return true;
            }
            owner.say(
                    who, "KEPT " + (token == null ? "-" : token.value()) + " the release was refused: unlocking again");
            if (!pace(asked)) {
                return false;
            }
        }
    }

    /**
     * After a failure that came at once (the client could not claim: a backend error), waits out the rest of
     * 100 ms, the pace of retries while the backend fails; a failure that took its time is retried at once.
     *
     * @return false if interrupted
     */
    private static boolean pace(long askedNanos) {
        long left = TimeUnit.MILLISECONDS.toNanos(100) - (System.nanoTime() - askedNanos);
        try {
            if (left > 0) {
                TimeUnit.NANOSECONDS.sleep(left); // nothing to wait for: the backend gives no sign it would answer now
            }
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /**
     * The end of one hold, said once: {@code RELEASING} by the thread when it gives the hold up, or {@code DONE}
     * when the lock's {@code done()} completed before that (the hold was lost). A {@code done()} that completes
     * because of the release says nothing, so a late callback never ends the thread's next hold.
     */
    private static final class HoldEnd {

        private final Owner owner;
        private final String who;
        private boolean said;

        HoldEnd(Owner owner, String who) {
            this.owner = owner;
            this.who = who;
        }

        synchronized void say(String event) {
            if (!said) {
                said = true;
                owner.say(who, event);
            }
        }
    }
}

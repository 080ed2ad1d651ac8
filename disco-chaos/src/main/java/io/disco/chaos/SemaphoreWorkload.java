package io.disco.chaos;

import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;

/**
 * The semaphore workload: {@value #LIMIT} permits; acquire → read → work → write(read + 1) → release
 * on the register of the permit's slot, guarded per slot (the resource's guard is keyed by
 * {@link Permit#guardKey()}), so the checkers judge each slot as a lock.
 */
final class SemaphoreWorkload implements Workload {

    static final int LIMIT = 2;

    @Override
    public String name() {
        return "semaphore";
    }

    @Override
    public void own(Owner owner) throws Exception {
        owner.sessions(session -> {
            try (SemaphoreService semaphore = session.newSemaphore(owner.name, LIMIT);
                 AutoCloseable closing = owner.closing()) {
                while (Owner.alive(session)) {
                    Permit p = owner.acquire(semaphore::acquire);
                    if (p == null) {
                        continue;
                    }
                    owner.granted(p.token(), p.guardKey(), Observations.EXCLUSIVE);
                    owner.increment(p.guardKey(), p.token());
                    owner.release(p.token(), semaphore::release);
                }
            }
        });
    }
}

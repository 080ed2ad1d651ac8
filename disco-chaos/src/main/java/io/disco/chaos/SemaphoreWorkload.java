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
    public void own(Owner owner) throws Exception {
        owner.<SemaphoreService>rounds(
                session -> session.newSemaphore(owner.name, LIMIT),
                semaphore -> owner.hold(
                        semaphore::acquire,
                        Permit::guardKey,
                        Observations.EXCLUSIVE,
                        p -> owner.increment(p.guardKey(), p.token()),
                        semaphore::release));
    }

    @Override
    public String name() {
        return "semaphore";
    }
}

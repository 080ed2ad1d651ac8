package io.disco.chaos;

import io.disco.lock.LockService;

/** The lock workload: lock → read → work → write(read + 1) → unlock, one register. */
final class LockWorkload implements Workload {

    @Override
    public void own(Owner owner) throws Exception {
        owner.<LockService>rounds(
                session -> session.newLock(owner.name),
                lock -> owner.hold(
                        lock::lock,
                        g -> Owner.MAIN,
                        Observations.EXCLUSIVE,
                        g -> owner.increment(Owner.MAIN, g.token()),
                        lock::unlock));
    }

    @Override
    public String name() {
        return "lock";
    }
}

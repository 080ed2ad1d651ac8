package io.disco.chaos;

import io.disco.lock.Grant;
import io.disco.lock.LockService;

/** The lock workload: lock → read → work → write(read + 1) → unlock, one register. */
final class LockWorkload implements Workload {

    @Override
    public String name() {
        return "lock";
    }

    @Override
    public void own(Owner owner) throws Exception {
        owner.sessions(session -> {
            try (LockService lock = session.newLock(owner.name);
                 AutoCloseable closing = owner.closing()) {
                while (Owner.alive(session)) {
                    Grant g = owner.acquire(lock::lock);
                    if (g == null) {
                        continue;
                    }
                    owner.granted(g.token(), Owner.MAIN, Observations.EXCLUSIVE);
                    owner.increment(Owner.MAIN, g.token());
                    owner.release(g.token(), lock::unlock);
                }
            }
        });
    }
}

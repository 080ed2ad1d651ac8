package io.disco.chaos;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.util.concurrent.TimeoutException;

/** The lock workload: lock → read → work → write(read + 1) → unlock, one register. */
final class LockWorkload implements Workload {

    @Override
    public String name() {
        return "lock";
    }

    @Override
    public void own(Owner owner) throws Exception {
        owner.sessions(session -> {
            try (LockService lock = session.newLock(owner.name)) {
                while (Owner.alive(session)) {
                    Grant g;
                    try {
                        g = lock.lock(Owner.ACQUIRE);
                    } catch (TimeoutException e) {
                        owner.say("TIMEOUT");
                        continue;
                    }
                    owner.granted(g.token(), Owner.MAIN, Observations.EXCLUSIVE);
                    owner.increment(Owner.MAIN, g.token());
                    owner.say("RELEASING " + g.token().value());
                    lock.unlock();
                    owner.say("RELEASE " + g.token().value());
                }
            }
        });
    }
}

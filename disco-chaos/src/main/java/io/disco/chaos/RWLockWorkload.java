package io.disco.chaos;

import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;

/**
 * The read/write lock workload: each round an owner is a writer (one in three: lock → read → work →
 * write(read + 1) → unlock) or a reader (rLock → read with its phase's token → work → rUnlock), on one
 * register. Readers of one phase share their token and overlap one another; a writer overlaps nobody.
 */
final class RWLockWorkload implements Workload {

    @Override
    public String name() {
        return "rwlock";
    }

    @Override
    public void own(Owner owner) throws Exception {
        owner.sessions(session -> {
            try (RWLockService rw = session.newRWLock(owner.name);
                 AutoCloseable closing = owner.closing()) {
                while (Owner.alive(session)) {
                    boolean writer = owner.random.nextInt(3) == 0;
                    RWGrant g = owner.acquire(writer ? rw::lock : rw::rLock);
                    if (g == null) {
                        continue;
                    }
                    owner.granted(g.token(), Owner.MAIN, writer ? Observations.EXCLUSIVE : Observations.SHARED);
                    if (writer) {
                        owner.increment(Owner.MAIN, g.token());
                    } else if (owner.read(Owner.MAIN, g.token()).statusCode() == 200) {
                        owner.work();
                    }
                    owner.release(g.token(), writer ? rw::unlock : rw::rUnlock);
                }
            }
        });
    }
}

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
    public void own(Owner owner) throws Exception {
        owner.<RWLockService>rounds(session -> session.newRWLock(owner.name), rw -> {
            boolean writer = owner.random.nextInt(3) == 0;
            Owner.Acquisition<RWGrant> acquisition = writer ? rw::lock : rw::rLock;
            owner.hold(
                    acquisition,
                    g -> Owner.MAIN,
                    writer ? Observations.EXCLUSIVE : Observations.SHARED,
                    g -> {
                        if (writer) {
                            owner.increment(Owner.MAIN, g.token());
                        } else if (owner.read(Owner.MAIN, g.token()).statusCode() == 200) {
                            owner.work();
                        }
                    },
                    writer ? rw::unlock : rw::rUnlock);
        });
    }

    @Override
    public String name() {
        return "rwlock";
    }
}

package io.disco.shedlock;

import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * What ShedLock holds for one run: a view of a {@link ShedHold} with the configuration it was locked or
 * last extended with. ShedLock's {@link AbstractSimpleLock} makes a view invalid once unlocked or
 * extended (an extension hands out a new view of the same hold).
 */
final class ShedLockView extends AbstractSimpleLock {

    private final ShedHold hold;

    ShedLockView(LockConfiguration configuration, ShedHold hold) {
        super(configuration);
        this.hold = hold;
    }

    @Override
    protected void doUnlock() {
        RunHolds.leave(hold);
        hold.unlock();
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        if (!hold.extend(newConfiguration.getLockAtMostFor(), newConfiguration.getLockAtLeastFor())) {
            return Optional.empty();
        }
        return Optional.of(new ShedLockView(newConfiguration, hold));
    }

    @Override
    public String toString() {
        return "DiscoShedLock[" + hold + "]";
    }
}

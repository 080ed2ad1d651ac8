package net.javacrumbs.shedlock.support;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;

/**
 * ShedLock's {@link KeepAliveLockProvider} with a minimum lockAtMostFor under its public one of 30 s (its
 * package-private constructor), so that a test sees it extend within a second.
 */
public final class ShortKeepAlive {

    private ShortKeepAlive() {}

    public static KeepAliveLockProvider of(
            ExtensibleLockProvider provider, ScheduledExecutorService executor, Duration minimumLockAtMostFor) {
        return new KeepAliveLockProvider(provider, executor, minimumLockAtMostFor);
    }
}

package io.disco.spring.boot;

import io.disco.shedlock.DiscoLockProvider;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Closes the application's {@link DiscoLockProvider} beans when the context stops, in a phase
 * ({@link #PHASE}) before {@link DiscoLifecycle}'s: the provider releases the locks it holds or keeps
 * (lockAtLeastFor) and stops its threads while the client is still open, instead of at bean destruction,
 * after the client was closed under it. The scheduler has stopped by then (its phase is higher), so no new
 * run claims a lock. Context restarts are not supported: a closed provider stays closed.
 */
final class AdapterShutdown extends ShutdownStep {

    /**
     * After the web server stopped ({@code DEFAULT_PHASE - 2048}) and the scheduler, before the client closes
     * ({@link DiscoLifecycle#PHASE}).
     */
    static final int PHASE = DiscoLifecycle.PHASE + 1024;

    private final ObjectProvider<DiscoLockProvider> providers;

    AdapterShutdown(ObjectProvider<DiscoLockProvider> providers) {
        super(PHASE);
        this.providers = providers;
    }

    @Override
    void shutDown() {
        providers.orderedStream().forEach(DiscoLockProvider::close);
    }
}

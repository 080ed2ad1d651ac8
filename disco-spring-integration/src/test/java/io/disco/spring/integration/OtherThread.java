package io.disco.spring.integration;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A thread other than the test's, for the tests of a class: a lock held by the test's thread is not held by this one.
 * Register it on a static field with {@code @RegisterExtension}: the thread starts before the class's first test and
 * stops after its last. Every task is bounded (20 s), so a hang becomes a failure.
 */
final class OtherThread implements BeforeAllCallback, AfterAllCallback {

    private volatile ExecutorService executor;
    /** The outermost class that registered it: its {@code @Nested} classes share the thread. */
    private String testClass;

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (executor == null) {
            executor = Executors.newSingleThreadExecutor();
            testClass = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (executor != null && context.getUniqueId().equals(testClass)) {
            executor.shutdownNow();
            executor = null;
        }
    }

    /** @return what {@code task} returned on the other thread */
    <T> T call(Callable<T> task) throws Exception {
        return executor.submit(task).get(20, TimeUnit.SECONDS);
    }

    /** @return what {@code task} threw on the other thread; an {@link AssertionError} if it threw nothing */
    Throwable failure(Callable<?> task) throws Exception {
        try {
            call(task);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the task did not fail");
    }
}

package io.disco.examples;

import java.util.concurrent.ExecutionException;

/**
 * What a scenario says of the step that failed it: the step's name and the failure, {@code <step>: <exception>}
 * (for a future's failure its cause; for an interruption {@code <step>: interrupted}).
 */
public final class FailedStep {

    private FailedStep() {}

    /**
     * Describes {@code step}'s failure; an interruption is kept, the thread's interrupt flag set again.
     *
     * @param step the step that was running, for example {@code node-b: campaign}
     * @param failure what it threw
     * @return {@code <step>: <failure>}
     */
    public static String describe(String step, Exception failure) {
        if (failure instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return step + ": interrupted";
        }
        return step + ": " + (failure instanceof ExecutionException ? failure.getCause() : failure);
    }
}

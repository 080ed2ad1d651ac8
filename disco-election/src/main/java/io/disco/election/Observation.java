package io.disco.election;

/**
 * A running {@linkplain ElectionService#observe(java.util.function.Consumer) observation} of an
 * election. Closing it stops the deliveries.
 */
public interface Observation extends AutoCloseable {

    /**
     * Stops observing. Once this returns, the listener is not called again. If the listener is running
     * on the observation's thread at that moment, this waits for it to return (unless called from the
     * listener itself). Idempotent.
     */
    @Override
    void close();
}

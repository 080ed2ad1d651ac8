package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import java.util.List;
import java.util.Optional;

/**
 * The cluster a command was pointed at, {@link Etcd} or {@link ZooKeeper}: what {@code holders} and the listing
 * parts of the other commands read the same way on both. Every call waits at most {@code --command-timeout} for
 * each answer, then fails with {@link ExitCode#UNREACHABLE}; an error the cluster answers is
 * {@link ExitCode#FAILED}. What a backend does its own way ({@code break}'s delete, {@code leftovers},
 * {@code watch}'s events, {@code list}'s names) its commands do on the {@link Etcd} or {@link ZooKeeper} itself.
 */
interface Cluster extends AutoCloseable {

    /** @return the backend's name for messages: {@code etcd} or {@code ZooKeeper} */
    String backend();

    /** @return the primitive of {@code name} from what the cluster holds of it, or empty when it holds nothing */
    Optional<Primitive> detect(String name);

    /**
     * @return the primitive given with {@code --primitive}, else the one found ({@link #detect}); exit code
     *     {@link ExitCode#NOTHING_HELD} with {@link #nothingHolds}'s message when neither
     */
    default Primitive resolve(String name, Primitive given) {
        if (given != null) {
            return given;
        }
        return detect(name).orElseThrow(() -> new CliFailure(ExitCode.NOTHING_HELD, nothingHolds(name)));
    }

    /** @return why nothing holds or waits for {@code name}: what was looked for, and how to look by hand */
    String nothingHolds(String name);

    /** @return who holds and who waits for {@code name}: holders first, then waiters, in queue order (the provider's listing) */
    List<Claimant> claimants(Primitive primitive, String name);

    /** @return whether {@code key} is a claim of {@code name} itself, not of a name nested under it */
    boolean isClaimOf(Primitive primitive, String name, String key);

    /** @return the name {@code key}, listed for {@code name}, is a claim of: {@code name}, or a nested name */
    String nameOf(Primitive primitive, String name, String key);

    /**
     * @return the {@code TTL} column of a claimant on {@code leaseId}: etcd's seconds left ({@code 27s}, {@code expired},
     *     {@code -} without a lease), {@code ?} on ZooKeeper (no client can read another session's time left)
     */
    String ttlLeft(long leaseId);

    /** Closes the connection. */
    @Override
    void close();
}

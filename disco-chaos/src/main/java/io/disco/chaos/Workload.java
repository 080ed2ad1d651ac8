package io.disco.chaos;

import java.util.List;

/**
 * One workload of the suite: what its owners do in their process ({@link #own}), always in the shape
 * grant → read → work → write(read + 1) → release, so that the same checkers judge every primitive.
 * One file per workload.
 */
interface Workload {

    /** Every workload, in the order {@code ./chaos} runs them. */
    List<Workload> ALL = List.of(
            new LockWorkload(),
            new ElectionWorkload(),
            new RWLockWorkload(),
            new SemaphoreWorkload(),
            new RunnerWorkload(),
            new ClientLockWorkload());

    /** @return the name given to {@code --workload} */
    String name();

    /** Runs the owner's loop until the process is terminated. */
    void own(Owner owner) throws Exception;

    static Workload named(String name) {
        return ALL.stream()
                .filter(w -> w.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown workload '" + name + "'; workloads: "
                        + ALL.stream().map(Workload::name).toList()));
    }
}

package io.disco.chaos;

import java.util.List;

/**
 * One workload of the suite: what its owners do in their process ({@link #own}), in the shape
 * grant → read → work → write(read + 1) → release, so that the same checkers judge every primitive; a workload of
 * another shape (the {@link BarrierWorkload}: no grants) brings the checkers that judge it ({@link #checkers()}).
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
            new ClientLockWorkload(),
            new BarrierWorkload());

    /** @return the name given to {@code --workload} */
    String name();

    /** @return the checkers of this workload beyond {@link Checker#all()}, new for each run; none by default */
    default List<Checker> checkers() {
        return List.of();
    }

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

package io.disco.chaos;

import java.util.List;

/**
 * Checker of the wall-clock fault: an owner whose wall clock was stepped by minutes (its monotonic
 * clock left alone) must not lose its session for it. A {@code DONE} of that owner while its clock
 * was stepped (no other fault runs then) fails the run: the library's lease tracking must not read the
 * wall clock. That the step reached the owner is shown by its {@code CLOCK} lines: the offset of its
 * wall clock from the run's, within 2 s of the step.
 *
 * @param runWallMillis the run's wall clock at {@code runNanos}, to place the owners' readings
 */
record ClockSteps(long runWallMillis, long runNanos) implements Checker {

    ClockSteps() {
        this(System.currentTimeMillis(), System.nanoTime());
    }

    @Override
    public void check(Observations o, Report r) {
        List<Observations.Fault> steps = o.faults().stream().filter(x -> x.type().equals("step-clock-owner")).toList();
        long lost = steps.stream().mapToLong(x -> o.events("DONE").stream()
                .filter(e -> e.owner().equals(x.target()) && x.covers(e.nanos())).count()).sum();
        long seen = steps.stream().filter(x -> o.events("CLOCK").stream().anyMatch(e -> e.owner().equals(x.target())
                && x.covers(e.nanos()) && Math.abs(offsetMillis(e) - 1000 * x.amount()) < 2000)).count();
        r.figure("wall-clock steps seen in the stepped owner's clock (of the steps)", seen);
        r.safety("sessions lost while the owner's wall clock was stepped", lost, null);
    }

    private long offsetMillis(Observations.Event clock) {
        long runWallAtEvent = runWallMillis - (runNanos - clock.nanos()) / 1_000_000;
        return Long.parseLong(clock.args().get(0)) - runWallAtEvent;
    }
}

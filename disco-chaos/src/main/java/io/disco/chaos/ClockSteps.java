package io.disco.chaos;

import java.util.List;

/**
 * Checker of the wall-clock fault: an owner whose wall clock was stepped by minutes (its monotonic
 * clock left alone) must not lose its session for it. A {@code DONE} of that owner while its clock
 * was stepped (no other fault runs then) fails the run: the library's lease tracking must not read the
 * wall clock; unless an owner whose clock was left alone lost its session in the same window too (the
 * cluster or the machine stalled them all), which is counted apart. That the step reached the owner
 * is shown by its {@code CLOCK} lines: the offset of its wall clock from the run's, within 2 s of the
 * step.
 *
 * @param runWallMillis the run's wall clock at {@code runNanos}, to place the owners' readings
 */
record ClockSteps(long runWallMillis, long runNanos) implements Checker {

    ClockSteps() {
        this(System.currentTimeMillis(), System.nanoTime());
    }

    @Override
    public void check(Observations o, Report r) {
        List<Observations.Fault> steps = o.faults().stream()
                .filter(x -> x.type().equals("step-clock-owner"))
                .toList();
        long lost = 0;
        long shared = 0;
        for (Observations.Fault x : steps) {
            List<Observations.Event> done =
                    o.events("DONE").stream().filter(e -> x.covers(e.nanos())).toList();
            long mine =
                    done.stream().filter(e -> e.process().equals(x.target())).count();
            // a loss that the owners whose clocks were left alone suffered too is not the step's doing
            if (done.stream().anyMatch(e -> !e.process().equals(x.target()))) {
                shared += mine;
            } else {
                lost += mine;
            }
        }
        long seen = steps.stream()
                .filter(x -> o.events("CLOCK").stream()
                        .anyMatch(e -> e.process().equals(x.target())
                                && x.covers(e.nanos())
                                && Math.abs(offsetMillis(e) - 1000 * x.amount()) < 2000))
                .count();
        r.figure("wall-clock steps seen in the stepped owner's clock (of the steps)", seen);
        r.figure("sessions lost during a step, by unstepped owners too (not the clock's doing)", shared);
        r.safety("sessions lost while the owner's wall clock was stepped", lost, null);
    }

    private long offsetMillis(Observations.Event clock) {
        long runWallAtEvent = runWallMillis - (runNanos - clock.nanos()) / 1_000_000;
        return Long.parseLong(clock.args().get(0)) - runWallAtEvent;
    }
}

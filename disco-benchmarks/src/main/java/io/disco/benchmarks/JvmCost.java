package io.disco.benchmarks;

import java.lang.management.ManagementFactory;

/**
 * What the JVM's live threads have allocated and spent on the CPU so far, summed over every thread
 * ({@code com.sun.management.ThreadMXBean}); the difference of two snapshots around a loop, divided by its
 * iterations, is the loop's cost per iteration in bytes and CPU time, whatever else the machine runs
 * (threads that end between the snapshots are not counted: none of the measured loops' do).
 */
record JvmCost(long allocatedBytes, long cpuNanos) {

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static JvmCost now() {
        long bytes = 0;
        long cpu = 0;
        for (long id : MX.getAllThreadIds()) {
            long b = MX.getThreadAllocatedBytes(id);
            long c = MX.getThreadCpuTime(id);
            bytes += Math.max(0, b);
            cpu += Math.max(0, c);
        }
        return new JvmCost(bytes, cpu);
    }

    /** @return kilobytes allocated per iteration since {@code before} */
    double kbPer(JvmCost before, int iterations) {
        return (allocatedBytes - before.allocatedBytes) / 1024.0 / iterations;
    }

    /** @return CPU microseconds per iteration since {@code before} */
    double cpuMicrosPer(JvmCost before, int iterations) {
        return (cpuNanos - before.cpuNanos) / 1000.0 / iterations;
    }
}

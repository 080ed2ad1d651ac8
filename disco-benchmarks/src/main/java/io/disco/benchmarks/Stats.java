package io.disco.benchmarks;

import java.util.Arrays;

/** Order statistics of samples (nearest-rank percentiles). */
final class Stats {

    private Stats() {}

    /** @return the {@code p}-th percentile (0..100) of {@code samples}, nearest rank; NaN when empty */
    static double percentile(double[] samples, double p) {
        if (samples.length == 0) {
            return Double.NaN;
        }
        double[] s = samples.clone();
        Arrays.sort(s);
        int rank = (int) Math.ceil(p / 100.0 * s.length);
        return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
    }

    static double median(double[] samples) {
        return percentile(samples, 50);
    }

    static double p99(double[] samples) {
        return percentile(samples, 99);
    }

    static double ms(long nanos) {
        return nanos / 1e6;
    }
}

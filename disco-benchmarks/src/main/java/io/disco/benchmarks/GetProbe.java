package io.disco.benchmarks;

import io.etcd.jetcd.Client;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One Get of a missing key through a jetcd client, timed: when the scale case's burst did not get every lock,
 * one through the shared client and one through a second tell which of the two is stuck, etcd or this client;
 * and after withdrawing, the shared client is probed until it answers quickly again.
 */
final class GetProbe {

    private GetProbe() {}

    /** Milliseconds one Get of {@code key} (missing) takes through {@code c}; NaN when it is not answered within 2 s. */
    static double ms(Client c, String key) {
        long t = System.nanoTime();
        try {
            c.getKVClient().get(Bench.bs(key)).get(2, TimeUnit.SECONDS);
            return Stats.ms(System.nanoTime() - t);
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** @return {@code ms} as a note says it */
    static String describe(double ms) {
        return Double.isNaN(ms) ? "no answer within 2 s" : String.format(Locale.ROOT, "%.1f ms", ms);
    }

    /** Waits until {@code c} answers a Get within 100 ms. @return milliseconds waited, or -1 after {@code boundMs} */
    static long recovery(Client c, String key, long boundMs) throws InterruptedException {
        long t0 = System.nanoTime();
        while (true) {
            double ms = ms(c, key);
            long waited = (System.nanoTime() - t0) / 1_000_000;
            if (ms <= 100) {
                return waited;
            }
            if (waited >= boundMs) {
                return -1;
            }
            Thread.sleep(250);
        }
    }
}

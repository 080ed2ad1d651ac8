package io.disco.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Variants measured side by side: round after round, every variant once a round, so that warm-up, the
 * JIT and a shared machine's load fall on all alike. The order within a round turns by one each round
 * ({@link #inTurn}, {@link #sampledInTurn}: with two variants, each goes first every other round) or is drawn anew from a seeded
 * {@link Random} ({@link #shuffled}); the samples of the first {@code warm} rounds are dropped. Each
 * result is {@code samples[variant][round]} in milliseconds, for {@link Stats}.
 */
final class Interleaved {

    private Interleaved() {}

    /** One measured variant: one lock+unlock, or the requests that stand for it; its sample is how long the call took. */
    interface Variant {
        void run() throws Exception;
    }

    /** A variant that takes its own sample, in milliseconds: for one whose figure is not how long its call took. */
    interface Sampled {
        double ms() throws Exception;
    }

    /** {@code warm} + {@code rounds} rounds of {@code variants}, timed, in an order that turns by one each round. */
    static double[][] inTurn(int warm, int rounds, Variant... variants) throws Exception {
        return sampledInTurn(warm, rounds, timed(variants));
    }

    /** {@code warm} + {@code rounds} rounds of {@code variants}, in an order that turns by one each round. */
    static double[][] sampledInTurn(int warm, int rounds, Sampled... variants) throws Exception {
        return measure(warm, rounds, variants, (round, order) -> {
            for (int j = 0; j < order.size(); j++) {
                order.set(j, (round + j) % order.size());
            }
        });
    }

    /**
     * {@code warm} + {@code rounds} rounds of {@code variants}, timed, in a new order every round drawn from
     * {@code order} (the last round's order shuffled again).
     */
    static double[][] shuffled(int warm, int rounds, Random order, Variant... variants) throws Exception {
        return measure(
                warm, rounds, timed(variants), (round, variantOrder) -> Collections.shuffle(variantOrder, order));
    }

    /** Sets the order of the variants in {@code round}. */
    private interface Order {
        void next(int round, List<Integer> order);
    }

    private static double[][] measure(int warm, int rounds, Sampled[] variants, Order order) throws Exception {
        double[][] samples = new double[variants.length][rounds];
        List<Integer> next =
                new ArrayList<>(IntStream.range(0, variants.length).boxed().toList());
        for (int i = 0; i < warm + rounds; i++) {
            order.next(i, next);
            for (int v : next) {
                double ms = variants[v].ms();
                if (i >= warm) {
                    samples[v][i - warm] = ms;
                }
            }
        }
        return samples;
    }

    private static Sampled[] timed(Variant[] variants) {
        Sampled[] timed = new Sampled[variants.length];
        for (int v = 0; v < variants.length; v++) {
            Variant variant = variants[v];
            timed[v] = () -> {
                long s = System.nanoTime();
                variant.run();
                long e = System.nanoTime();
                return Stats.ms(e - s);
            };
        }
        return timed;
    }
}

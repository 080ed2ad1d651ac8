package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.bs;
import static io.disco.benchmarks.Bench.get;
import static io.disco.benchmarks.Bench.log;

import io.disco.lock.LockService;
import io.disco.micrometer.DiscoMetrics;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testing.RpcCounter;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Case "uncontended" (section 1): one disco lock+unlock against the physical floor (a create-if-absent
 * Txn with a lease, then a Delete), disco's exact two Txns sent raw, jetcd's {@code Lock} client and
 * disco with {@code DiscoMetrics} bound, interleaved round by round on one client; then the etcd
 * requests of one disco lock+unlock and, for disco, its Txns raw and the floor, the JVM's allocation and CPU
 * per lock+unlock over every thread ({@link JvmCost}). Targets: disco vs the floor and vs jetcd, Micrometer's cost.
 * {@code --uncontended-only} runs this case alone.
 */
final class Uncontended implements BenchCase {

    @Override
    public String name() {
        return "uncontended";
    }

    @Override
    public void run(Bench bench) throws Exception {
        boolean quick = bench.quick;
        Client client = bench.client;
        String root = bench.root;
        Report report = bench.report;
        RpcCounter counter = bench.counter;
        int warm = quick ? 60 : 500;
        int rounds = quick ? 200 : 2000;
        log("1. uncontended lock+unlock: %d warm-up + %d interleaved rounds of 5 variants", warm, rounds);
        KV kv = client.getKVClient();
        EtcdSession session = EtcdSession.open(client, EtcdOptions.defaults());
        EtcdSession metered = EtcdSession.open(client, EtcdOptions.builder()
                .listener(DiscoMetrics.of(new SimpleMeterRegistry())).build());
        // an hour: on a data-centre network with fsync (--network dc) the case takes minutes, past 300 s
        long lease = get(client.getLeaseClient().grant(3600)).getID();
        try (LockService disco = session.newLock(root + "/u/disco");
             LockService discoMetered = metered.newLock(root + "/u/disco-metered")) {
            ByteSequence floorKey = bs(root + "/u/floor/" + Long.toHexString(lease));
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            Op2 floor = () -> {
                TxnResponse r = get(kv.txn().If(new Cmp(floorKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(floorKey, ByteSequence.EMPTY, withLease)).commit());
                if (!r.isSucceeded()) {
                    throw new IllegalStateException("floor key already there");
                }
                get(kv.delete(floorKey));
            };
            // disco's exact two requests (create Txn that also reads the owner; guarded delete Txn), raw
            String shapePrefix = root + "/u/shape/";
            ByteSequence shapeKey = bs(shapePrefix + Long.toHexString(lease));
            GetOption firstCreated = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();
            Op2 shape = () -> {
                TxnResponse r = get(kv.txn().If(new Cmp(shapeKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(shapeKey, ByteSequence.EMPTY, withLease), Op.get(bs(shapePrefix), firstCreated))
                        .Else(Op.get(shapeKey, GetOption.DEFAULT), Op.get(bs(shapePrefix), firstCreated)).commit());
                long rev = r.getHeader().getRevision();
                get(kv.txn().If(new Cmp(shapeKey, Cmp.Op.EQUAL, CmpTarget.createRevision(rev)))
                        .Then(Op.delete(shapeKey, DeleteOption.DEFAULT)).commit());
            };
            ByteSequence jetcdName = bs(root + "/u/jetcd");
            Op2 jetcd = () -> {
                LockResponse r = get(client.getLockClient().lock(jetcdName, lease));
                get(client.getLockClient().unlock(r.getKey()));
            };
            Op2 discoOp = () -> {
                disco.lock();
                disco.unlock();
            };
            Op2 meteredOp = () -> {
                discoMetered.lock();
                discoMetered.unlock();
            };
            String[] names = {"disco", "floor", "disco-shape raw", "jetcd Lock", "disco with Micrometer"};
            Op2[] ops = {discoOp, floor, shape, jetcd, meteredOp};
            double[][] samples = new double[ops.length][rounds];
            for (int i = 0; i < warm + rounds; i++) {
                for (int j = 0; j < ops.length; j++) {
                    int v = (i + j) % ops.length; // rotate the order every round
                    long s = System.nanoTime();
                    ops[v].run();
                    long e = System.nanoTime();
                    if (i >= warm) {
                        samples[v][i - warm] = Stats.ms(e - s);
                    }
                }
            }
            // RPCs of one disco lock+unlock (separate short pass, so the counts are not mixed)
            int n = 50;
            RpcCounter.Snapshot before = counter.snapshot();
            for (int i = 0; i < n; i++) {
                discoOp.run();
            }
            RpcCounter.Snapshot d = counter.snapshot().minus(before);
            double discoRpcs = (d.calls("KV/") + d.watchCreates()) / (double) n;
            // JVM cost of one lock+unlock (allocation and CPU over every thread), disco against its Txns raw and the floor
            int costRounds = quick ? 500 : 3000;
            double[] kb = new double[3];
            double[] cpuUs = new double[3];
            Op2[] costed = {discoOp, shape, floor};
            for (int v = 0; v < costed.length; v++) {
                JvmCost c0 = JvmCost.now();
                for (int i = 0; i < costRounds; i++) {
                    costed[v].run();
                }
                JvmCost c1 = JvmCost.now();
                kb[v] = c1.kbPer(c0, costRounds);
                cpuUs[v] = c1.cpuMicrosPer(c0, costRounds);
            }

            double[] med = new double[ops.length];
            double[] p99 = new double[ops.length];
            for (int v = 0; v < ops.length; v++) {
                med[v] = Stats.median(samples[v]);
                p99[v] = Stats.p99(samples[v]);
            }
            report.row("1 uncontended", "disco lock+unlock", med[0], p99[0], "ms",
                    "vs_floor", med[0] / med[1], "vs_jetcd", med[0] / med[3], "etcd_rpcs", discoRpcs,
                    "alloc_kb", kb[0], "jvm_cpu_us", cpuUs[0]);
            report.row("1 uncontended", "floor: create-if-absent Txn + Delete", med[1], p99[1], "ms", "rpcs", 2,
                    "alloc_kb", kb[2], "jvm_cpu_us", cpuUs[2]);
            report.row("1 uncontended", "disco's 2 Txns sent raw", med[2], p99[2], "ms", "vs_floor", med[2] / med[1],
                    "alloc_kb", kb[1], "jvm_cpu_us", cpuUs[1]);
            report.row("1 uncontended", "jetcd Lock lock+unlock", med[3], p99[3], "ms", "vs_floor", med[3] / med[1], "rpcs", 2);
            double withMeters = med[4] / med[0];
            report.row("1 uncontended", "disco lock+unlock, DiscoMetrics bound", med[4], p99[4], "ms", "vs_disco", withMeters);
            report.target("disco lock+unlock with Micrometer bound vs without", "<= 1.02 x (within noise)",
                    String.format(Locale.ROOT, "%.3f x (%.3f ms vs %.3f ms)", withMeters, med[4], med[0]), withMeters <= 1.02,
                    withMeters <= 1.02 ? "" : "the listener events are queued and told on the callback executor per acquisition and release");

            double rf = med[0] / med[1];
            String cause = String.format(Locale.ROOT,
                    "disco %.3f ms = floor %.3f + owner read inside the create Txn %+.3f (disco's Txns sent raw: %.3f)"
                            + " + client-side work %+.3f (the claim's steps: building and reading Txns, futures, two timers"
                            + " per request; not the hand-offs to the session thread, whose removal measured no difference);"
                            + " %.1f etcd RPCs per lock+unlock",
                    med[0], med[1], med[2] - med[1], med[2], med[0] - med[2], discoRpcs);
            report.target("disco lock+unlock vs floor", "median <= 1.10 x floor",
                    String.format(Locale.ROOT, "%.3f x", rf), rf <= 1.10, cause);
            double rj = med[0] / med[3];
            report.target("disco lock+unlock vs jetcd Lock", "median <= jetcd Lock",
                    String.format(Locale.ROOT, "%.3f x (disco %.3f ms, jetcd %.3f ms)", rj, med[0], med[3]), rj <= 1.0,
                    rj <= 1.0 ? "" : cause);
        } finally {
            session.close();
            metered.close();
            client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        }
    }

    /** One measured variant: one lock+unlock, or the requests that stand for it. */
    private interface Op2 {
        void run() throws Exception;
    }
}

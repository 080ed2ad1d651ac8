package io.disco.benchmarks;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The scale case's reference for its burst: the same number of create-if-absent Txns (the floor's acquire: one leased
 * key each, under its own name) sent raw through the run's client with the session's window in flight, timed until
 * the last is answered. What etcd and jetcd on this machine make of that many writes at once; the keys and the lease
 * are removed after.
 */
final class RawBurst {

    private RawBurst() {}

    /** @return the seconds until {@code n} create Txns under {@code prefix}, at most {@code window} in flight, were answered */
    static double seconds(Client client, String prefix, int n, int window) throws Exception {
        long lease = client.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
        PutOption leased = PutOption.builder().withLeaseId(lease).build();
        Semaphore inFlight = new Semaphore(window);
        CompletableFuture<?>[] answers = new CompletableFuture<?>[n];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            ByteSequence key =
                    ByteSequence.from(prefix + "/" + i + "/" + Long.toHexString(lease), StandardCharsets.UTF_8);
            inFlight.acquire();
            answers[i] = client.getKVClient()
                    .txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, ByteSequence.EMPTY, leased))
                    .commit()
                    .whenComplete((r, e) -> inFlight.release());
        }
        CompletableFuture.allOf(answers).get(2, TimeUnit.MINUTES);
        double secs = (System.nanoTime() - t0) / 1e9;
        client.getLeaseClient().revoke(lease).get(30, TimeUnit.SECONDS);
        ByteSequence all = ByteSequence.from(prefix + "/", StandardCharsets.UTF_8);
        client.getKVClient()
                .delete(all, DeleteOption.builder().isPrefix(true).build())
                .get(30, TimeUnit.SECONDS);
        return secs;
    }
}

package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.bs;
import static io.disco.benchmarks.Bench.get;
import static io.disco.benchmarks.Bench.log;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Case "watch-delivery" (section 2), the cause of the slow handoffs: etcd puts a watcher whose start
 * revision is not above its current revision into the "unsynced" group, which a loop catches up
 * every 100 ms; a delete that happens meanwhile reaches the watcher only then. Both disco and etcd's own lock watch the
 * predecessor from the revision of the read that found it. Measured here: delete to event,
 * watch started at that read's revision vs at the revision after it.
 */
final class WatchDelivery implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        int n = bench.quick ? 20 : 60;
        log("2. watch delivery: delete -> event, watch from the read's revision vs revision + 1, %d each", n);
        ByteSequence key = bs(bench.root + "/w/key");
        double[][] samples = Interleaved.sampledInTurn(
                0, n, () -> deleteToEvent(bench.client, key, 0), () -> deleteToEvent(bench.client, key, 1));
        bench.report.samples("2 watch delivery", "delete -> event, watch from read's revision", samples[0]);
        bench.report.samples("2 watch delivery", "delete -> event, watch from revision + 1", samples[1]);
        bench.report.notes.add(
                "slow handoffs (handoffs_over_50ms): a watch that starts at or below etcd's current revision"
                        + " is 'unsynced' and gets its events only at etcd's next 100 ms catch-up (see '2 watch delivery')."
                        + " jetcd's Lock (etcd's server-side recipe) watches from the read's revision and pays it at small K;"
                        + " disco watches the keys ahead from etcd's current revision (synced at once) and reads their names"
                        + " again when the watch started after the read that named them");
    }

    /**
     * Puts {@code key}, reads it, watches it from the read's revision plus {@code afterRead}, deletes it.
     *
     * @return milliseconds from the delete's answer to the watch's event
     */
    private static double deleteToEvent(Client client, ByteSequence key, int afterRead) throws Exception {
        get(client.getKVClient().put(key, ByteSequence.EMPTY));
        long rev = get(client.getKVClient().get(key)).getHeader().getRevision();
        CompletableFuture<Long> event = new CompletableFuture<>();
        WatchOption opt = WatchOption.builder()
                .withRevision(rev + afterRead)
                .withNoPut(true)
                .build();
        try (Watch.Watcher w = client.getWatchClient().watch(key, opt, r -> event.complete(System.nanoTime()))) {
            Thread.sleep(5); // the watch is created; a short queue hands off a few ms later
            get(client.getKVClient().delete(key));
            long deleted = System.nanoTime();
            return Stats.ms(event.get(10, TimeUnit.SECONDS) - deleted);
        }
    }
}

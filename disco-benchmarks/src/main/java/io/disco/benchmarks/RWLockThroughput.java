package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Case "rwlock" (section 3): 8 readers, a session each, repeat read-lock, read-unlock on one
 * read/write lock while 0, 1 and 2 writers (a session each) repeat lock, unlock; reads and writes
 * per second over a fixed window.
 */
final class RWLockThroughput implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        long windowMs = bench.quick ? 1_500 : 6_000;
        int readers = 8;
        log("3. read/write lock: %d readers with 0, 1, 2 writers, %.1f s each", readers, windowMs / 1e3);
        for (int writers = 0; writers <= 2; writers++) {
            String prefix = bench.root + "/rw/" + writers;
            List<EtcdSession> sessions = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            java.util.concurrent.atomic.LongAdder reads = new java.util.concurrent.atomic.LongAdder();
            java.util.concurrent.atomic.LongAdder writes = new java.util.concurrent.atomic.LongAdder();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            try {
                for (int i = 0; i < readers + writers; i++) {
                    EtcdSession s = EtcdSession.open(bench.client, EtcdOptions.defaults());
                    sessions.add(s);
                    io.disco.rwlock.RWLockService svc = s.newRWLock(prefix);
                    boolean reader = i < readers;
                    Thread t = new Thread(
                            () -> {
                                try {
                                    start.await();
                                    while (!stop.get()) {
                                        if (reader) {
                                            svc.rLock();
                                            svc.rUnlock();
                                            reads.increment();
                                        } else {
                                            svc.lock();
                                            svc.unlock();
                                            writes.increment();
                                        }
                                    }
                                } catch (Throwable e) {
                                    if (!stop.get()) {
                                        failure.compareAndSet(null, e);
                                    }
                                }
                            },
                            "bench-rw");
                    t.setDaemon(true);
                    threads.add(t);
                    t.start();
                }
                long t0 = System.nanoTime();
                start.countDown();
                Thread.sleep(windowMs);
                stop.set(true);
                double secs = (System.nanoTime() - t0) / 1e9;
                double r = reads.sum() / secs;
                double w = writes.sum() / secs;
                for (Thread t : threads) {
                    t.join(30_000);
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("read/write lock run failed", failure.get());
                }
                bench.report.row(
                        "3 rwlock",
                        readers + " readers, " + writers + " writers",
                        Double.NaN,
                        Double.NaN,
                        "",
                        "reads_per_s",
                        r,
                        "writes_per_s",
                        w);
            } finally {
                for (EtcdSession s : sessions) {
                    s.close();
                }
            }
        }
    }
}

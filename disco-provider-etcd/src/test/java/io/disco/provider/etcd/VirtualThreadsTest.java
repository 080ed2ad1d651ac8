package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Virtual threads (issue 34, item 11), run on JDK 25 by its own surefire execution (tag {@code jdk25};
 * the JDK is {@code -Ddisco.jdk25=...}, see the module's POM).
 *
 * <p>What it proves on JDK 25:
 * <ul>
 *   <li>10,000 virtual threads on 100 names through one client all lock and unlock (no deadlock, no
 *       lost wake-up: every one finishes within the bound), one holder per name at a time, and the
 *       tokens of each name strictly increase in the order of the holds.</li>
 *   <li>Nothing of the library pins a carrier thread on JDK 25: JFR's {@code jdk.VirtualThreadPinned}
 *       events (threshold 0, with stack traces) are recorded through the run, and none has a frame of
 *       the library's classes, except where the JDK was loading a class (the class loader's lock, see
 *       {@link #loadingAClass}). A virtual thread that blocks in a class initializer (which pins on every
 *       JDK) shows that the recording does see pinning.</li>
 *   <li>No monitor of the library is held across a call that can block: a static scan of the library's
 *       bytecode ({@link MonitorScan}) finds every {@code synchronized} method and block, and every class
 *       initializer (whose lock pins the threads that wait for it, on JDK 25 too), of disco-client,
 *       disco-lock, disco-core, disco-provider-etcd, disco-election, disco-rwlock, disco-semaphore and
 *       disco-fencing, and follows the calls made inside it to the JDK's blocking waits.</li>
 * </ul>
 *
 * <p>What it does not prove: since JDK 24 (JEP 491) a virtual thread that blocks while holding a monitor
 * unmounts, so on JDK 25 no JFR event can show the pinning that JDK 21 users would get from a
 * {@code synchronized} block around a blocking call; the static scan stands in for that, and it sees only
 * what its call graph reaches (not jetcd's or gRPC's code, users' callbacks, or what a
 * {@code CompletableFuture} runs inline on completion). On JDK 21 a contended monitor still pins while
 * its threads wait to enter it; the library's monitors guard field updates (and schedule timers, log,
 * complete internal futures) and never wait, so those waits are short. Nor does it prove anything about
 * a user's executor or listener that blocks: the library calls them outside its monitors.
 */
@Tag("jdk25")
class VirtualThreadsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final int THREADS = 10_000;
    private static final int NAMES = 100;

    /** The library's classes: one of each scanned module. */
    private static final List<Class<?>> MODULES = List.of(
            Disco.class,
            FencedLock.class,
            Primitive.class,
            EtcdProvider.class,
            ElectionService.class,
            RWLockService.class,
            SemaphoreService.class,
            FencingToken.class);

    private static MonitorScan library() {
        Set<Path> roots = new LinkedHashSet<>();
        MODULES.forEach(c -> roots.add(MonitorScan.codeSource(c)));
        return MonitorScan.of(new ArrayList<>(roots), "io/disco/");
    }

    /** {@code Executors.newVirtualThreadPerTaskExecutor()}: this module compiles for Java 17. */
    private static ExecutorService virtualThreads() throws ReflectiveOperationException {
        return (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }

    private static boolean isVirtual(Thread t) throws ReflectiveOperationException {
        return (boolean) Thread.class.getMethod("isVirtual").invoke(t);
    }

    @Test
    void tenThousandVirtualThreadsOnOneHundredNamesThroughOneClient() throws Exception {
        assertTrue(
                Runtime.version().feature() >= 25,
                "this test runs on JDK 25 (its own surefire execution), not on " + Runtime.version()
                        + ": run it through Maven, or pass -Ddisco.jdk25=<a JDK 25>");
        Set<String> library = library().classNames();
        String prefix = Etcd.uniquePrefix("vthreads");
        List<List<Long>> tokens = new ArrayList<>();
        List<AtomicInteger> inside = new ArrayList<>();
        for (int n = 0; n < NAMES; n++) {
            tokens.add(new ArrayList<>());
            inside.add(new AtomicInteger());
        }
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger platform = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        Path dump = Files.createTempFile("vthreads-pinned", ".jfr");
        try (Client client = Etcd.client(ETCD.cluster());
                Disco disco = EtcdProvider.disco(client, Etcd.ttl(10));
                Recording recording = new Recording()) {
            warmUp(disco, prefix + "/warm-up");
            recording
                    .enable("jdk.VirtualThreadPinned")
                    .withThreshold(Duration.ZERO)
                    .withStackTrace();
            recording.start();
            ExecutorService threads = virtualThreads();
            long start = System.nanoTime();
            List<Future<?>> all = new ArrayList<>(THREADS);
            for (int i = 0; i < THREADS; i++) {
                int n = i % NAMES;
                String name = prefix + "/n" + n;
                all.add(threads.submit(() -> {
                    if (!isVirtual(Thread.currentThread())) {
                        platform.incrementAndGet();
                    }
                    FencedLock lock = disco.lock(name);
                    lock.lock();
                    try {
                        if (inside.get(n).incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        tokens.get(n).add(lock.token().value()); // one holder at a time: the list is in hold order
                        inside.get(n).decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                    finished.incrementAndGet();
                    return null;
                }));
            }
            threads.shutdown();
            if (!threads.awaitTermination(90, TimeUnit.SECONDS)) {
                String where = dumpThreads();
                threads.shutdownNow();
                throw new AssertionError("deadlock or stall: " + finished.get() + " of " + THREADS
                        + " virtual threads finished within 90 s; every thread's stack, virtual ones included: "
                        + where);
            }
            long took = System.nanoTime() - start;
            for (Future<?> f : all) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new AssertionError("a virtual thread failed: " + e.getCause(), e.getCause());
                }
            }
            // The canary: a virtual thread that blocks in a class initializer pins on every JDK.
            ExecutorService canary = virtualThreads();
            canary.submit(PinsInItsInitializer::touch).get(10, TimeUnit.SECONDS);
            canary.shutdown();
            recording.stop();
            recording.dump(dump);
            System.out.printf(
                    "%d virtual threads, %d names: %d ms%n", THREADS, NAMES, TimeUnit.NANOSECONDS.toMillis(took));
        }
        assertEquals(0, platform.get(), "tasks that did not run on a virtual thread");
        assertEquals(THREADS, finished.get());
        assertEquals(0, overlaps.get(), "holds that overlapped another hold of the same name");
        for (int n = 0; n < NAMES; n++) {
            List<Long> t = tokens.get(n);
            assertEquals(THREADS / NAMES, t.size(), "holds of name " + n);
            for (int i = 1; i < t.size(); i++) {
                assertTrue(
                        t.get(i) > t.get(i - 1),
                        "tokens of name " + n + " not strictly increasing at hold " + i + ": " + t);
            }
        }

        List<RecordedEvent> pinned;
        try {
            pinned = RecordingFile.readAllEvents(dump);
        } finally {
            Files.deleteIfExists(dump);
        }
        assertTrue(
                pinned.stream().anyMatch(e -> frames(e).contains(PinsInItsInitializer.class.getName())),
                "the recording saw no pinning, not even the canary's: " + pinned.size() + " events");
        List<String> ours = pinned.stream()
                .filter(e -> frames(e).stream().anyMatch(library::contains))
                .filter(e -> !loadingAClass(e))
                .map(VirtualThreadsTest::describe)
                .collect(Collectors.toList());
        assertEquals(List.of(), ours, "virtual threads pinned inside the library");
    }

    @Test
    void noMonitorOfTheLibraryIsHeldAcrossABlockingCall() {
        MonitorScan scan = library();
        for (Class<?> c : MODULES) {
            assertTrue(scan.classNames().contains(c.getName()), c + " scanned");
        }
        List<String> findings = scan.findings().stream()
                .map(MonitorScan.Finding::toString)
                .sorted()
                .collect(Collectors.toList());
        assertEquals(
                List.of(),
                findings,
                "replace these monitors with java.util.concurrent locks, or move the blocking call out");
    }

    /** The scan finds what it is for: a fixture with a monitor held across waits, direct and indirect. */
    @Test
    void theScanFindsAMonitorHeldAcrossAWait() {
        MonitorScan scan = MonitorScan.of(
                List.of(MonitorScan.codeSource(VirtualThreadsTest.class)),
                VirtualThreadsTest.class.getName().replace('.', '/') + "$HeldAcrossAWait");
        List<String> flagged = scan.findings().stream()
                .map(MonitorScan.Finding::method)
                .sorted()
                .collect(Collectors.toList());
        assertEquals(
                List.of(
                        HeldAcrossAWait.LooksUpItsHost.class.getName() + ".<clinit>()",
                        HeldAcrossAWait.class.getName() + ".joinsInABlock()",
                        HeldAcrossAWait.class.getName() + ".locksThroughALambda()",
                        HeldAcrossAWait.class.getName() + ".runsALambdaThatWaits()",
                        HeldAcrossAWait.class.getName() + ".waitsInAHelper()"),
                flagged,
                scan.findings().toString());
    }

    /**
     * Runs the same paths once before the recording: the first use of a class pins a virtual thread on
     * every JDK while the class is loaded, linked and initialized (the JVM's frames are then on the
     * stack), which says nothing about the library's locking.
     */
    private static void warmUp(Disco disco, String prefix) throws Exception {
        ExecutorService threads = virtualThreads();
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String name = prefix + "/n" + (i % 4);
            all.add(threads.submit(() -> {
                FencedLock lock = disco.lock(name);
                lock.lock();
                try {
                    return lock.token();
                } finally {
                    lock.unlock();
                }
            }));
        }
        for (Future<?> f : all) {
            f.get(60, TimeUnit.SECONDS);
        }
        threads.shutdown();
    }

    /**
     * Writes a dump of every thread, virtual threads included ({@code HotSpotDiagnosticMXBean.dumpThreads},
     * JDK 21+, called by reflection: this module compiles for Java 17), and returns where it is.
     */
    private static String dumpThreads() {
        try {
            Path file = Path.of("target", "VirtualThreadsTest-threads-" + System.currentTimeMillis() + ".txt")
                    .toAbsolutePath();
            Class<?> bean = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            Class<?> format = Class.forName("com.sun.management.HotSpotDiagnosticMXBean$ThreadDumpFormat");
            Object diagnostics = java.lang.management.ManagementFactory.getPlatformMXBean(
                    bean.asSubclass(java.lang.management.PlatformManagedObject.class));
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object text = Enum.valueOf((Class) format, "TEXT_PLAIN");
            bean.getMethod("dumpThreads", String.class, format).invoke(diagnostics, file.toString(), text);
            return file.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "(no thread dump: " + e + ")";
        }
    }

    /**
     * Whether the thread pinned while the JDK loaded a class for it: the frames above the first one
     * outside the JDK include {@code ClassLoader.loadClass}, whose lock is the class loader's, not the
     * library's. The warm-up loads what it reaches, but a path it did not take (a contended hand-off,
     * a retry) can load its first class during the run; that pin says nothing about the library's
     * locking, which the static scan checks.
     */
    private static boolean loadingAClass(RecordedEvent e) {
        if (e.getStackTrace() == null) {
            return false;
        }
        for (RecordedFrame f : e.getStackTrace().getFrames()) {
            String type = f.getMethod().getType().getName();
            if (!(type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun."))) {
                return false;
            }
            if (type.equals(ClassLoader.class.getName())
                    && f.getMethod().getName().equals("loadClass")) {
                return true;
            }
        }
        return false;
    }

    private static List<String> frames(RecordedEvent e) {
        if (e.getStackTrace() == null) {
            return List.of();
        }
        return e.getStackTrace().getFrames().stream()
                .map(RecordedFrame::getMethod)
                .map(m -> m.getType().getName())
                .collect(Collectors.toList());
    }

    private static String describe(RecordedEvent e) {
        return e.getEventType().getName() + " " + e.getDuration()
                + (e.hasField("pinnedReason")
                        ? " (" + e.getValue("pinnedReason") + ", " + e.getValue("blockingOperation") + ")"
                        : "")
                + " at "
                + (e.getStackTrace() == null
                        ? "?"
                        : e.getStackTrace().getFrames().stream()
                                .limit(12)
                                .map(f -> f.getMethod().getType().getName() + "."
                                        + f.getMethod().getName() + ":" + f.getLineNumber())
                                .collect(Collectors.joining(" <- ")));
    }

    /** Blocks in its class initializer, which pins a virtual thread on every JDK. */
    static final class PinsInItsInitializer {
        static {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }

        static void touch() {}
    }

    /** What the scan must flag, and one monitor (around a field write) that it must not. */
    @SuppressWarnings("unused")
    static final class HeldAcrossAWait {
        private final Object monitor = new Object();
        private final ReentrantLock lock = new ReentrantLock();
        private final CompletableFuture<Void> answer = new CompletableFuture<>();
        private int count;

        void joinsInABlock() {
            synchronized (monitor) {
                count++;
                answer.join();
            }
        }

        synchronized void waitsInAHelper() {
            helper();
        }

        private void helper() {
            try {
                answer.get(1, TimeUnit.SECONDS);
            } catch (Exception e) {
                count--;
            }
        }

        void locksThroughALambda() {
            Runnable r = lock::lock;
            synchronized (monitor) {
                r.run();
            }
        }

        void runsALambdaThatWaits() {
            synchronized (monitor) {
                List.of(answer).forEach(CompletableFuture::join);
            }
        }

        /** A class initializer that can block: every other thread that uses the class waits for it, pinned. */
        static final class LooksUpItsHost {
            static final String HOST = lookUp();

            private static String lookUp() {
                try {
                    return java.net.InetAddress.getLocalHost().getHostName();
                } catch (java.io.IOException e) {
                    return "";
                }
            }
        }

        void countsOnly() {
            synchronized (monitor) {
                count++;
            }
            answer.join(); // after the block: fine
        }
    }
}

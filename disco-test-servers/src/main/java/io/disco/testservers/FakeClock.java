package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * The wall clock of one child process, steppable while it runs, through Debian's libfaketime
 * (package {@code faketime}) preloaded into the child. Only the wall clock moves: the monotonic clock,
 * which the library's lease tracking, the JVM's timed waits and gRPC deadlines use, is left alone.
 *
 * <p>Measured with libfaketime 0.9.10 on Debian 12: left to itself it turns on its "monotonic fix",
 * which breaks JVM timed waits ({@code LockSupport.parkNanos(100 ms)} returned after 8 µs); with
 * {@code FAKETIME_DONT_FAKE_MONOTONIC=1}, {@code FAKETIME_FORCE_MONOTONIC_FIX=0} and
 * {@code FAKETIME_NO_CACHE=1} the offset in the per-process {@code FAKETIME_TIMESTAMP_FILE} steps a
 * running JVM's {@code System.currentTimeMillis()} and nothing else: {@code System.nanoTime()} runs on,
 * {@code Thread.sleep}, {@code parkNanos} and {@code Object.wait} of 100 ms take 100 ms. Without
 * {@code FAKETIME_NO_CACHE} a step is not seen for seconds (libfaketime caches the file). The file holds
 * the offset from real time, {@code +300} or {@code -300} (seconds); {@link #step(long)} replaces it
 * with an atomic move, so that the child never reads half a file. The JDK 17 {@code HttpClient}
 * times its request and connect timeouts on the wall clock: a step forward fails them early.
 *
 * <p>{@code libc.so.6} is preloaded right after libfaketime, so that {@code malloc} and its kin resolve to glibc's
 * ahead of an allocator the program links: libfaketime's initialisation allocates (through {@code dlsym}) from inside
 * the first {@code clock_gettime}, and a jemalloc that calls {@code clock_gettime} while it initialises deadlocks with
 * it (libfaketime issue #130, not fixed upstream). Debian's {@code redis-server} 7.0.15 links the system jemalloc:
 * under libfaketime alone even {@code redis-server --version} hangs ("Unexpected recursive calls to clock_gettime()");
 * with glibc's {@code malloc} first it runs (its {@code INFO} still names jemalloc, whose statistics it reads). For a
 * JVM, which allocates with glibc anyway, the extra entry changes nothing. libfaketime must come first: its
 * {@code dlsym(RTLD_NEXT, ...)} finds the real functions only in what is loaded after it.
 *
 * <p>What a stepped {@code redis-server} 7.0.15 does ({@link RedisServer#start(java.util.Map, FakeClock)}), measured:
 * {@code TIME} moves with the step at once; keys expire on the wall clock (a key set with {@code PX 10000} is gone
 * right after a step of +30 s, and one set before a step of -30 s answers {@code PTTL} 39,951 ms); a blocking
 * command's timeout runs on the wall clock too ({@code BLPOP} with 5 s returned as soon as a step of +30 s came, 1 s
 * in; with 2 s and a step of -30 s it had not returned after 10 s); the event loop's timers run on the monotonic clock
 * ({@code serverCron}, hence the active expiry cycle, kept running after a step of -30 s: keys set with {@code PX 300}
 * were expired without being read, within 1.5 s).
 *
 * <p>Without libfaketime, {@link #environment()} and {@link #requireInstalled()} fail with an
 * {@link IllegalStateException} that says how to install it; tests never skip.
 */
public final class FakeClock implements AutoCloseable {

    private static final List<Path> LIBRARY = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/faketime/libfaketime.so.1"));

    private final Path file;

    /** A clock at real time, until {@link #step(long)}; its offset file is a temporary file {@link #close()} deletes. */
    public FakeClock() {
        try {
            file = Files.createTempFile("disco-faketime-", ".offset");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        step(0);
    }

    /**
     * Fails early, before anything is started, when libfaketime is missing.
     *
     * @throws IllegalStateException saying how to install libfaketime, when it is missing
     */
    public static void requireInstalled() {
        library();
    }

    private static Path library() {
        return LIBRARY.stream()
                .filter(Files::isReadable)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("libfaketime not found (looked in " + LIBRARY
                        + "): install Debian's faketime package (apt-get install faketime)"));
    }

    /**
     * The variables that put a child process on this clock: add them to its {@link ProcessBuilder#environment()}.
     *
     * @return the variables, name to value
     * @throws IllegalStateException saying how to install libfaketime, when it is missing
     */
    public Map<String, String> environment() {
        return Map.of(
                "LD_PRELOAD",
                library() + ":libc.so.6",
                "FAKETIME_TIMESTAMP_FILE",
                file.toString(),
                "FAKETIME_DONT_FAKE_MONOTONIC",
                "1",
                "FAKETIME_FORCE_MONOTONIC_FIX",
                "0",
                "FAKETIME_NO_CACHE",
                "1");
    }

    /**
     * Sets the wall clock to real time plus {@code seconds} (negative: behind), at once.
     *
     * @param seconds the offset from real time; 0 puts the clock back
     * @throws UncheckedIOException if the offset file cannot be written
     */
    public void step(long seconds) {
        try {
            Path next = Files.createTempFile(file.getParent(), "disco-faketime-", ".next");
            Files.writeString(next, (seconds >= 0 ? "+" : "") + seconds + "\n");
            Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes the offset file: close it after the processes on the clock have ended. */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

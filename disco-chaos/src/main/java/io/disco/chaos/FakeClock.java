package io.disco.chaos;

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
 */
final class FakeClock implements AutoCloseable {

    private static final List<Path> LIBRARY = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/faketime/libfaketime.so.1"));

    private final Path file;

    /** A clock at real time, until {@link #step(long)}. */
    FakeClock() {
        try {
            file = Files.createTempFile("disco-faketime-", ".offset");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        step(0);
    }

    /** @throws IllegalStateException saying how to install libfaketime, when it is missing */
    static void requireInstalled() {
        library();
    }

    private static Path library() {
        return LIBRARY.stream()
                .filter(Files::isReadable)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("libfaketime not found (looked in " + LIBRARY
                        + "): install Debian's faketime package (apt-get install faketime)"));
    }

    /** @return the variables that put a child process on this clock */
    Map<String, String> environment() {
        return Map.of(
                "LD_PRELOAD",
                library().toString(),
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
     */
    void step(long seconds) {
        try {
            Path next = Files.createTempFile(file.getParent(), "disco-faketime-", ".next");
            Files.writeString(next, (seconds >= 0 ? "+" : "") + seconds + "\n");
            Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.disco.benchmarks;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Stands in for {@code System.err} while the scale case runs ({@link #install()} to {@link #restore()}): forwards
 * every line shortened to {@value #KEEP} characters, or, while {@link #quiet()}, only counts them (keeping the
 * start of the first). The library's WARN lines about a session name all of its services, 10,000 in that case
 * (about 390,000 characters a line).
 */
final class ShortenedStderr extends OutputStream {
    private static final int KEEP = 300;
    private final PrintStream real;
    private final StringBuilder line = new StringBuilder();
    private long lineChars;
    private boolean forwarding = true;
    private String firstSinceQuiet;
    private long lines;
    private long bytes;

    private ShortenedStderr(PrintStream real) {
        this.real = real;
    }

    /** @return a filter in front of the current {@code System.err}, which it now stands in for */
    static ShortenedStderr install() {
        ShortenedStderr stderr = new ShortenedStderr(System.err);
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        return stderr;
    }

    /** Puts the real {@code System.err} back. */
    void restore() {
        System.setErr(real);
    }

    @Override
    public synchronized void write(int b) {
        bytes++;
        if (b == '\n') {
            lines++;
            String shown = lineChars > KEEP ? line + " ... (" + lineChars + " characters)" : line.toString();
            if (forwarding) {
                real.println(shown);
            } else if (firstSinceQuiet == null) {
                firstSinceQuiet = shown;
            }
            line.setLength(0);
            lineChars = 0;
        } else {
            lineChars++;
            if (line.length() < KEEP) {
                line.append((char) b);
            }
        }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        for (int i = off; i < off + len; i++) {
            write(b[i]);
        }
    }

    /** Stops forwarding. @return {lines, bytes} so far */
    synchronized long[] quiet() {
        forwarding = false;
        firstSinceQuiet = null;
        return new long[] {lines, bytes};
    }

    /** Forwards again. @return {lines, bytes} so far */
    synchronized long[] forward() {
        forwarding = true;
        return new long[] {lines, bytes};
    }

    synchronized String firstSinceQuiet() {
        return firstSinceQuiet;
    }
}

package io.disco.examples;

import io.disco.client.DiscoBackend;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;

/** Prints a scenario's steps, prefixed with the time and the scenario's name, on standard output. */
public final class Say {

    /**
     * Standard output in UTF-8, whatever the platform default (the verdict lines hold a dash). It
     * writes through {@link System#out}, so that whoever captured it (a test runner) still sees it.
     */
    public static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    private final String scenario;

    /**
     * @param scenario the scenario's name, for example {@code lock/http}
     */
    public Say(String scenario) {
        this.scenario = scenario;
    }

    /**
     * Prints one step.
     *
     * @param format a {@link String#format} pattern
     * @param args its arguments
     */
    public void step(String format, Object... args) {
        String line = LocalTime.now().format(TIME) + " [" + scenario + "] " + String.format(format, args);
        synchronized (OUT) {
            OUT.println(line);
        }
    }

    /**
     * What a frozen owner's log line says ({@link io.disco.client.TestableBackend#freeze}), the same for every
     * backend.
     *
     * @param owner the frozen owner
     * @return for example {@code it renews lease 694d7f3c0a1b2c3d (TTL 2 s) no more, releasing nothing; the backend
     *     ends it within 2 s}
     */
    public static String frozen(DiscoBackend.Owner owner) {
        return "it renews " + owner.describe() + " no more, releasing nothing; the backend ends it within "
                + Math.max(1, owner.ttl().toSeconds()) + " s";
    }

    /** @return the scenario's name */
    public String scenario() {
        return scenario;
    }
}

package io.disco.examples;

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

    /** @return the scenario's name */
    public String scenario() {
        return scenario;
    }
}

package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of the run (the resource, an owner) whose output lines are collected: event lines (those
 * that start with a number) go to the run's shared sink, and up to 20 other lines are kept to be shown
 * when the child made no progress.
 */
final class Child implements AutoCloseable {

    final Process process;
    final List<String> others = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;

    Child(List<String> mainAndArgs, Map<String, String> environment, List<String> sink) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElseThrow(),
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path")));
        cmd.addAll(mainAndArgs);
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true);
        b.environment().putAll(environment);
        process = b.start();
        reader = new Thread(() -> read(sink), "chaos-child-output");
        reader.setDaemon(true);
        reader.start();
    }

    private void read(List<String> sink) {
        try {
            new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))
                    .lines()
                    .forEach(l -> {
                        lines.add(l);
                        if (sink != null && l.matches("^\\d+ .*")) {
                            sink.add(l);
                        } else if (sink != null && !l.startsWith("\t") && others.size() < 20) {
                            others.add(l);
                        }
                    });
        } catch (java.io.UncheckedIOException closed) {
            // the process ended and its stream was closed under the reader
        }
    }

    /** @return the first line starting with {@code prefix} within {@code seconds} */
    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            String l = lines.poll(100, TimeUnit.MILLISECONDS);
            if (l != null && l.startsWith(prefix)) {
                return l;
            }
        }
        throw new IllegalStateException("no '" + prefix + "' within " + seconds + " s");
    }

    void signal(String sig) throws Exception {
        new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
                .start()
                .waitFor(5, TimeUnit.SECONDS);
    }

    /**
     * Resumes the child if frozen, asks it to end (SIGTERM: an owner closes its session first), kills it
     * after 15 s, and returns once its last line was read. The SIGTERM is sent with {@code kill}, not
     * {@link Process#destroy()}, which closes the child's output at once and loses what it prints
     * while it closes.
     */
    @Override
    public void close() throws Exception {
        signal("CONT");
        signal("TERM");
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(TimeUnit.SECONDS.toMillis(5));
    }
}

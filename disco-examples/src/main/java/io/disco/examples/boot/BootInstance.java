package io.disco.examples.boot;

import io.disco.examples.Http;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * One instance of the example Spring Boot application ({@code disco-spring-boot-example}) as a process of
 * its own: started with the application's classpath, its output in a log file, its {@code /status} read
 * over HTTP, frozen and resumed with SIGSTOP and SIGCONT, stopped (gracefully, then forcibly) on close.
 */
final class BootInstance implements AutoCloseable {

    /** The example application's main class. */
    static final String MAIN = "io.disco.examples.bootapp.ExampleApplication";

    private static final Duration POLL = Duration.ofMillis(100);
    private static final long STOP_SECONDS = 15;

    private final String name;
    private final int port;
    private final Process process;
    private final Path log;
    private final HttpClient http = Http.client();
    private volatile boolean frozen;

    private BootInstance(String name, int port, Process process, Path log) {
        this.name = name;
        this.port = port;
        this.process = process;
        this.log = log;
    }

    /** @return a free loopback port (free when asked: the instance binds it a moment later) */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts an instance; returns at once (see {@link #awaitStatus}).
     *
     * @param name the instance's name ({@code example.instance}, {@code disco.client-id})
     * @param port its HTTP port
     * @param classpath the application's runtime classpath
     * @param logDir where its log file goes
     * @param properties Spring Boot properties, passed as {@code --key=value}
     * @return the started process
     * @throws IOException if the JVM cannot be started
     */
    static BootInstance start(String name, int port, String classpath, Path logDir, Map<String, String> properties)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-cp",
                classpath,
                MAIN,
                "--server.port=" + port,
                "--server.address=127.0.0.1",
                "--example.instance=" + name));
        properties.forEach((k, v) -> command.add("--" + k + "=" + v));
        Path log = logDir.resolve(name + ".log");
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new BootInstance(name, port, p, log);
    }

    /** @return the instance's name */
    String name() {
        return name;
    }

    /** @return its process id */
    long pid() {
        return process.pid();
    }

    /** @return its base URI, for example {@code http://127.0.0.1:8081} */
    URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** @return its log file */
    Path log() {
        return log;
    }

    /**
     * Reads {@code /status} until {@code until} holds, polling every 100 ms.
     *
     * @param until the condition on the status ({@code key=value} lines as a map)
     * @param timeout how long to wait
     * @param what what is awaited, for the failure's message
     * @return the status that satisfied it
     * @throws IllegalStateException if it did not within {@code timeout}, or the process exited
     * @throws InterruptedException if interrupted
     */
    Map<String, String> awaitStatus(Predicate<Map<String, String>> until, Duration timeout, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + " (log: " + log + ")");
            }
            try {
                HttpResponse<String> r = Http.send(
                        http,
                        HttpRequest.newBuilder(uri().resolve("/status")).build(),
                        HttpResponse.BodyHandlers.ofString(),
                        Duration.ofSeconds(2));
                if (r.statusCode() == 200) {
                    Map<String, String> status = parse(r.body());
                    if (until.test(status)) {
                        return status;
                    }
                    last = status.toString();
                } else {
                    last = "HTTP " + r.statusCode();
                }
            } catch (IOException e) {
                last = e.toString();
            }
            LockSupport.parkNanos(POLL.toNanos());
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
        throw new IllegalStateException(name + ": " + what + " not within " + timeout.toSeconds() + " s (last status: "
                + last + "; log: " + log + ")");
    }

    /** Freezes the process (SIGSTOP): its threads, timers and lease keep-alives stop; its sockets stay open. */
    void freeze() {
        signal("STOP");
        frozen = true;
    }

    /** Resumes the frozen process (SIGCONT): it goes on with whatever it was doing. */
    void resume() {
        signal("CONT");
        frozen = false;
    }

    /** Stops the process: resumed if frozen, then SIGTERM (Spring Boot's graceful shutdown), then SIGKILL. */
    @Override
    public void close() {
        if (frozen) {
            try {
                resume();
            } catch (RuntimeException e) {
                // it may have exited meanwhile; destroy below either way
            }
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(STOP_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** @return the last {@code lines} lines of its log, for a failure's report */
    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    private static Map<String, String> parse(String body) {
        Map<String, String> m = new HashMap<>();
        for (String line : body.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1).trim());
            }
        }
        return m;
    }

    /** Java has no SIGSTOP/SIGCONT API, so this runs {@code kill -SIG pid}. */
    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(STOP_SECONDS, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " for " + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + name, e);
        }
    }
}

package io.disco.testservers;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The process of one local cluster member (an etcd member, a ZooKeeper server), started again and again
 * with the same log file: killing it (SIGKILL), stopping it (SIGTERM, then SIGKILL), freezing and thawing it
 * (SIGSTOP, SIGCONT) and reading its log's tail for error messages. Every wait is bounded. Not thread-safe:
 * its cluster serialises access.
 */
final class MemberProcess {

    private static final long EXIT_TIMEOUT_SECONDS = 10;
    private static final int LOG_TAIL_BYTES = 4096;

    /** What it is, for messages: {@code etcd member m0}. */
    private final String label;

    final Path logFile;
    private Process process;
    private boolean paused;

    MemberProcess(String label, Path logFile) {
        this.label = label;
        this.logFile = logFile;
    }

    /** Starts {@code command}; its stdout and stderr are appended to {@link #logFile}. */
    void launch(List<String> command) throws IOException {
        launch(command, Map.of());
    }

    /** Starts {@code command} with {@code environment} added to this JVM's; its output goes to {@link #logFile}. */
    void launch(List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        builder.environment().putAll(environment);
        process = builder.start();
        paused = false;
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** @return whether it was frozen with {@link #pause()} and not thawed since */
    boolean isPaused() {
        return paused && isRunning();
    }

    /** Waits up to {@code millis} for the process to exit; returns whether it has exited. */
    boolean awaitExit(long millis) throws InterruptedException {
        return process == null || process.waitFor(millis, TimeUnit.MILLISECONDS);
    }

    long pid() {
        return process == null ? -1 : process.pid();
    }

    /** SIGKILL (delivered to stopped processes too), then waits for the exit. */
    void kill() {
        if (process != null) {
            process.destroyForcibly();
            awaitExitOrFail("SIGKILL");
            paused = false;
        }
    }

    /** SIGTERM (after SIGCONT if paused), waits for a graceful exit, falls back to SIGKILL. */
    void stop() {
        if (!isRunning()) {
            return;
        }
        if (paused) {
            signal("CONT");
        }
        process.destroy();
        try {
            if (process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill();
    }

    /**
     * SIGSTOP, and waits (up to {@value #EXIT_TIMEOUT_SECONDS} s) until every thread of the process is stopped:
     * {@code kill} returns once the signal is sent, and a thread busy on a core or inside a system call (an
     * fsync) goes on until it next leaves the kernel, long enough on a loaded machine to answer one more request.
     */
    void pause() {
        requireRunning("pause");
        signal("STOP");
        paused = true;
        awaitStopped();
    }

    /** Polls {@code /proc/<pid>/task/<tid>/stat} until every thread's state is stopped ({@code T}, or {@code t}). */
    private void awaitStopped() {
        Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(EXIT_TIMEOUT_SECONDS);
        while (true) {
            String running = runningThread(tasks);
            if (running == null || !process.isAlive()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(label + " (pid " + process.pid() + ") was sent SIGSTOP but its thread "
                        + running + " did not stop within " + EXIT_TIMEOUT_SECONDS + " s");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // no event tells a stop
        }
    }

    /** @return a thread of the process that is not stopped yet (its id and state), or null when all are */
    private static String runningThread(Path tasks) {
        try (var list = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) list::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                // pid (comm) state ...: the comm may hold spaces and parentheses, the state follows the last ')'
                char state = stat.charAt(stat.lastIndexOf(')') + 2);
                if (state != 'T' && state != 't') {
                    return task.getFileName() + " (" + state + ")";
                }
            }
            return null;
        } catch (IOException e) {
            return null; // no /proc entry: the process is gone
        }
    }

    /** SIGCONT. */
    void resume() {
        requireRunning("resume");
        signal("CONT");
        paused = false;
    }

    private void requireRunning(String operation) {
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + operation + " " + label + ": it is not running");
        }
    }

    /** Java has no SIGSTOP/SIGCONT API, so this runs {@code kill -SIG pid}. */
    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " did not finish");
            }
            if (kill.exitValue() != 0) {
                String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " for " + label, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + label, e);
        }
    }

    private void awaitExitOrFail(String what) {
        try {
            if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException(label + " (pid " + process.pid() + ") did not exit within "
                        + EXIT_TIMEOUT_SECONDS + " s after " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + label + " to exit", e);
        }
    }

    /** The last few KB of the member's log, for error messages. */
    String logTail() {
        if (!Files.exists(logFile)) {
            return "(no log)";
        }
        try (RandomAccessFile file = new RandomAccessFile(logFile.toFile(), "r")) {
            long start = Math.max(0, file.length() - LOG_TAIL_BYTES);
            byte[] bytes = new byte[(int) (file.length() - start)];
            file.seek(start);
            file.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + logFile + ": " + e + ")";
        }
    }
}

package io.disco.provider.etcd;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code etcdctl} (etcd's v3 CLI) against a test cluster. */
final class Etcdctl implements AutoCloseable {

    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final CompletableFuture<Void> eof = new CompletableFuture<>();

    private Etcdctl(Process process) {
        this.process = process;
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            lines.add(line);
                        }
                    } catch (IOException ignored) {
                        // the process ended
                    } finally {
                        eof.complete(null);
                    }
                },
                "etcdctl-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code etcdctl --endpoints=<endpoint> args...}; fails with how to install it when missing. */
    static Etcdctl start(String endpoint, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary());
        cmd.add("--endpoints=" + endpoint);
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        return new Etcdctl(pb.start());
    }

    private static String binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            File f = new File(dir, "etcdctl");
            if (f.canExecute()) {
                return f.getPath();
            }
        }
        throw new IllegalStateException(
                "etcdctl not found on PATH: install it with `apt-get install etcd-client` (Debian/Ubuntu)");
    }

    /** The next line of output, or null when none came within {@code millis}. */
    String nextLine(long millis) throws InterruptedException {
        return lines.poll(millis, TimeUnit.MILLISECONDS);
    }

    int waitFor(long seconds) throws Exception {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("etcdctl did not exit within " + seconds + " s");
        }
        eof.get(seconds, TimeUnit.SECONDS);
        return process.exitValue();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Ends etcdctl the way a user's Ctrl-C does (SIGINT), so it releases what it holds. */
    void interrupt() throws Exception {
        new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

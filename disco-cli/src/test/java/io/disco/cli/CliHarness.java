package io.disco.cli;

import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Runs {@code disco} commands in the test JVM against given endpoints, with their output captured. */
final class CliHarness implements AutoCloseable {

    /** What one run printed, and its exit code. */
    record Run(int code, String out, String err) {
    }

    private final List<String> endpoints;
    private final Client client;

    CliHarness(List<String> endpoints) {
        this.endpoints = endpoints;
        this.client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
    }

    /** A jetcd client of the same cluster, for the test's own reads and writes. */
    Client client() {
        return client;
    }

    Run disco(String stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        InputStream in = new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8));
        int code = DiscoCli.run(withEndpoints(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), in);
        Run r = new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        System.out.println("$ disco " + String.join(" ", args) + "  -> " + code + "\n" + r.out() + r.err());
        return r;
    }

    String[] withEndpoints(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        if (all.stream().noneMatch(a -> a.startsWith("--endpoints"))) {
            all.add("--endpoints=" + String.join(",", endpoints));
        }
        return all.toArray(String[]::new);
    }

    EtcdSession session(String clientId) {
        return EtcdSession.open(client, EtcdOptions.builder().ttl(Duration.ofSeconds(20)).clientId(clientId).build());
    }

    static String name(String what) {
        return "/test/cli/" + what + "/" + UUID.randomUUID();
    }

    static String hex(EtcdSession s) {
        return Long.toHexString(s.leaseId());
    }

    /** Whether {@code key} exists now. */
    boolean exists(String key) throws Exception {
        return client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS).getCount() == 1;
    }

    /** A {@code disco watch} running on its own thread until {@link #close}d (interrupted), its output captured. */
    final class Watching implements AutoCloseable {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final AtomicInteger code = new AtomicInteger(-1);
        private final Thread thread;
        private final String[] args;

        Watching(String... args) {
            this.args = args;
            PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);
            thread = new Thread(() -> code.set(DiscoCli.run(withEndpoints(args), print, print, InputStream.nullInputStream())),
                    "disco-watch");
            thread.start();
        }

        /** Everything printed so far (stdout and stderr, in order). */
        String text() {
            synchronized (bytes) {
                return bytes.toString(StandardCharsets.UTF_8);
            }
        }

        /** Whether a line printed so far contains every one of {@code parts}. */
        boolean printed(String... parts) {
            return text().lines().anyMatch(l -> List.of(parts).stream().allMatch(l::contains));
        }

        /** The exit code once closed (-1 while running). */
        int code() {
            return code.get();
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join(10_000);
            System.out.println("$ disco " + String.join(" ", args) + "  -> " + code.get() + "\n" + text());
        }
    }

    @Override
    public void close() {
        client.close();
    }
}

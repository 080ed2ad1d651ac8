package io.disco.examples.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.Cli;
import io.disco.examples.Http;
import io.disco.examples.lock.http.resource.HttpResource;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mark survives a restart of the resource process: the example HTTP resource runs in a JVM of
 * its own, accepts a newer owner's token, is killed with SIGKILL and started again; a request with
 * the older token is then answered 409. Once with the file store, once seeded from etcd's revision.
 */
class GuardRestartTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final Pattern LISTENING = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");

    @TempDir
    Path dir;

    private final HttpClient http = Http.client();
    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(Process::destroyForcibly);
    }

    /** A resource JVM; returns its base URI once it listens. */
    private URI startResource(String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElseThrow(),
                "-cp",
                System.getProperty("java.class.path"),
                HttpResource.class.getName(),
                "--port",
                "0",
                "--endpoints",
                String.join(",", ETCD.cluster().endpoints())));
        command.addAll(List.of(options));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        started.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        URI uri = CompletableFuture.supplyAsync(() -> {
                    try {
                        for (String line; (line = out.readLine()) != null; ) {
                            Matcher m = LISTENING.matcher(line);
                            if (m.find()) {
                                return URI.create(m.group(1));
                            }
                        }
                        throw new IllegalStateException("the resource exited with " + p.waitFor());
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .get(60, TimeUnit.SECONDS);
        Thread drain = new Thread(() -> out.lines().forEach(l -> {}), "resource-output");
        drain.setDaemon(true);
        drain.start();
        return uri;
    }

    private static void kill9(Process p) throws InterruptedException {
        p.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no flush
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(137, p.exitValue(), "killed by SIGKILL");
    }

    private int write(URI resource, FencingToken token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(resource.resolve("/write"))
                .POST(HttpRequest.BodyPublishers.ofString("by " + token));
        FencingHttp.inject(r, token);
        return Http.send(http, r.build(), HttpResponse.BodyHandlers.ofString(), Duration.ofSeconds(10))
                .statusCode();
    }

    @Test
    void withTheFileStoreTheOlderTokenIsRejectedAfterSigkill() throws Exception {
        try (Client client = Cli.etcdClient(ETCD.cluster().endpoints())) { // tokens 10 and 20 must have been issued
            while (io.disco.provider.etcd.EtcdProvider.currentRevision(client, Duration.ofSeconds(10))
                            .value()
                    < 20) {
                client.getKVClient()
                        .put(
                                io.etcd.jetcd.ByteSequence.from("/test/examples/restart-rev", StandardCharsets.UTF_8),
                                io.etcd.jetcd.ByteSequence.from("x", StandardCharsets.UTF_8))
                        .get(10, TimeUnit.SECONDS);
            }
        }
        String state = dir.resolve("marks").toString();
        URI first = startResource("--state-file", state);
        assertEquals(200, write(first, FencingToken.of(10)));
        assertEquals(200, write(first, FencingToken.of(20)));
        kill9(started.get(0));

        URI restarted = startResource("--state-file", state);
        assertEquals(409, write(restarted, FencingToken.of(10)), "the zombie's token after the restart");
        assertEquals(200, write(restarted, FencingToken.of(20)));
    }

    @Test
    void seededFromEtcdEveryTokenFromBeforeTheRestartIsRejected() throws Exception {
        URI first = startResource();
        FencingToken zombie;
        try (Client client = Cli.etcdClient(ETCD.cluster().endpoints());
                EtcdSession session = EtcdSession.open(client);
                LockService lock = session.newLock("/test/examples/restart")) {
            Grant a = lock.lock(Duration.ofSeconds(10));
            zombie = a.token();
            assertEquals(200, write(first, zombie));
            lock.unlock(); // the grant ends: a later write to etcd
            kill9(started.get(0));

            URI restarted = startResource("--fence-from-etcd");
            assertEquals(409, write(restarted, zombie), "a token issued before the restart");
            Grant b = lock.lock(Duration.ofSeconds(10));
            assertEquals(200, write(restarted, b.token()), "a grant made after the restart");
            lock.unlock();
        }
    }
}

package io.disco.provider.etcd;

import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipListener;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.FencingHttp;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A leadership runner in a JVM of its own, for the frozen-process test: while it leads, its task
 * writes to a guarded HTTP resource every 50 ms with its term's token. Prints {@code ELECTED <token>},
 * {@code WRITE <token> <status>} and {@code SIGNALLED <token> <end>} lines.
 *
 * <p>Arguments: endpoints (comma-separated), election prefix, resource URI.
 */
public final class RunnerChild {

    private RunnerChild() {}

    public static void main(String[] args) throws Exception {
        Client client = Client.builder().endpoints(args[0].split(",")).build();
        String prefix = args[1];
        URI resource = URI.create(args[2]);
        HttpClient http = HttpClient.newHttpClient();
        LeadershipRunner runner = EtcdProvider.newLeadershipRunner(
                client,
                prefix,
                LeadershipRunner.Options.builder("child", term -> {
                            say("ELECTED " + term.token().value());
                            term.ended()
                                    .thenAccept(end ->
                                            say("SIGNALLED " + term.token().value() + " " + end));
                            while (term.isActive()) {
                                HttpRequest.Builder r = HttpRequest.newBuilder(resource)
                                        .timeout(Duration.ofSeconds(5))
                                        .POST(HttpRequest.BodyPublishers.ofString("child"));
                                FencingHttp.inject(r, term.token());
                                int status = http.send(r.build(), HttpResponse.BodyHandlers.discarding())
                                        .statusCode();
                                say("WRITE " + term.token().value() + " " + status);
                                Thread.sleep(50); // the pace of the child's writes
                            }
                        })
                        .listener(new LeadershipListener() {
                            @Override
                            public void revoked(Leadership term, LeaderTerm.End end, Throwable cause) {
                                say("REVOKED " + term.token().value() + " " + end);
                            }
                        })
                        .build(),
                EtcdOptions.builder().ttl(Duration.ofSeconds(2)).build());
        Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
        Thread.currentThread().join();
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }
}

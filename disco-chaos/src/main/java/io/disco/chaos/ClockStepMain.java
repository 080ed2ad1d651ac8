package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A child process of {@code ClockStepTest}, run under a {@link io.disco.testservers.FakeClock}: it holds one etcd lease
 * and answers on its standard input, so that the test can step its wall clock and see what the lease
 * does.
 *
 * <p>{@code java io.disco.chaos.ClockStepMain jetcd|disco <endpoints> <ttl seconds>}:
 * <ul>
 *   <li>{@code jetcd}: grants a lease and keeps it alive with jetcd's own
 *       {@code Lease.keepAlive(leaseId, observer)}, the control: jetcd times its renewals and its
 *       lease deadline on the wall clock.</li>
 *   <li>{@code disco}: opens this library's {@link EtcdSession} with that TTL.</li>
 * </ul>
 *
 * <p>Every line it prints starts with its {@link System#nanoTime()} (the monotonic clock, which all
 * processes of one host share) and its mode:
 * <ul>
 *   <li>{@code LEASE <id>}: a lease it keeps alive (decimal id).</li>
 *   <li>{@code CLOCK <wall-clock millis>}: its {@link System#currentTimeMillis()}, answering the
 *       input line {@code CLOCK}; with the line's monotonic prefix the test sees that the wall clock
 *       moved by the step and the monotonic clock did not.</li>
 *   <li>{@code jetcd} only: {@code COMPLETED <id>} and {@code ERROR <id> <exception>} when jetcd ends the
 *       keep-alive of a lease; the input line {@code NEW} grants a fresh lease and keeps it alive too.</li>
 *   <li>{@code disco} only: {@code DONE <id> <err>} when the session's {@code done()} completes.</li>
 * </ul>
 * The process ends when its input closes.
 */
final class ClockStepMain {

    private static final long WAIT_SECONDS = 10;

    private final String mode;

    private ClockStepMain(String mode) {
        this.mode = mode;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long ttl = Long.parseLong(args[2]);
        ClockStepMain main = new ClockStepMain(mode);
        try (Client client = Client.builder().endpoints(args[1].split(",")).build()) {
            // connect first: on a cold JVM the first call can take longer than the 2 s TTL, and a session
            // counts its lease's validity from the moment it sent the grant
            client.getKVClient()
                    .get(ByteSequence.from("/disco-chaos/ping", UTF_8))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            switch (mode) {
                case "jetcd" -> main.jetcd(client, ttl);
                case "disco" -> main.disco(client, ttl);
                default ->
                    throw new IllegalArgumentException("usage: ClockStepMain jetcd|disco <endpoints> <ttl seconds>");
            }
        }
        System.exit(0);
    }

    private void jetcd(Client client, long ttl) throws Exception {
        keepAlive(client, ttl);
        commands(line -> {
            if (line.equals("NEW")) {
                keepAlive(client, ttl);
            }
        });
    }

    private void keepAlive(Client client, long ttl) throws Exception {
        long id = client.getLeaseClient()
                .grant(ttl)
                .get(WAIT_SECONDS, TimeUnit.SECONDS)
                .getID();
        client.getLeaseClient().keepAlive(id, new StreamObserver<LeaseKeepAliveResponse>() {
            @Override
            public void onNext(LeaseKeepAliveResponse value) {}

            @Override
            public void onError(Throwable t) {
                say("ERROR " + id + " " + t);
            }

            @Override
            public void onCompleted() {
                say("COMPLETED " + id);
            }
        });
        say("LEASE " + id);
    }

    private void disco(Client client, long ttl) throws Exception {
        EtcdSession session = EtcdSession.open(
                client, EtcdOptions.builder().ttl(Duration.ofSeconds(ttl)).build());
        long id = session.leaseId();
        session.done()
                .thenRun(() -> say(
                        "DONE " + id + " " + session.err().map(Object::toString).orElse("-")));
        say("LEASE " + id);
        commands(line -> {});
        session.close();
    }

    private interface Command {
        void run(String line) throws Exception;
    }

    /** Answers {@code CLOCK}, hands other lines to {@code other}, until the input closes. */
    private void commands(Command other) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.equals("CLOCK")) {
                say("CLOCK " + System.currentTimeMillis());
            } else {
                other.run(line);
            }
        }
    }

    /** One line: the monotonic clock read when it is written, the mode, the event. */
    private void say(String event) {
        synchronized (System.out) {
            System.out.println(System.nanoTime() + " " + mode + " " + event);
            System.out.flush();
        }
    }
}

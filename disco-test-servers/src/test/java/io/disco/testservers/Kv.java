package io.disco.testservers;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * jetcd put/get for the tests: every call has a timeout, retries are bounded by a deadline.
 *
 * <p>Retrying matters after a fault: a proposal that a follower forwarded to a leader that was just
 * killed is dropped, and etcd only answers it with "request timed out" after about 5 s. A short
 * per-attempt timeout plus a retry gets through as soon as the new leader is elected.
 */
final class Kv {

    static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);
    static final Duration RETRY_DEADLINE = Duration.ofSeconds(15);

    private Kv() {}

    static Client client(List<String> endpoints) {
        return Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
    }

    static Client client(String endpoint) {
        return client(List.of(endpoint));
    }

    /** One put that must answer within {@code timeout}. */
    static void put(Client client, String key, String value, Duration timeout) throws Exception {
        client.getKVClient().put(bytes(key), bytes(value)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One get that must answer within {@code timeout}; {@code null} if the key is absent. */
    static String get(Client client, String key, Duration timeout) throws Exception {
        List<KeyValue> kvs = client.getKVClient()
                .get(bytes(key))
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .getKvs();
        return kvs.isEmpty() ? null : kvs.get(0).getValue().toString(UTF_8);
    }

    /** Put, retried ({@link #ATTEMPT_TIMEOUT} per attempt) until it succeeds or {@link #RETRY_DEADLINE} passes. */
    static void putEventually(Client client, String key, String value) throws Exception {
        eventually(() -> {
            put(client, key, value, ATTEMPT_TIMEOUT);
            return null;
        });
    }

    /** Get, retried ({@link #ATTEMPT_TIMEOUT} per attempt) until it succeeds or {@link #RETRY_DEADLINE} passes. */
    static String getEventually(Client client, String key) throws Exception {
        return eventually(() -> get(client, key, ATTEMPT_TIMEOUT));
    }

    private static <T> T eventually(Callable<T> call) throws Exception {
        long deadline = System.nanoTime() + RETRY_DEADLINE.toNanos();
        while (true) {
            try {
                return call.call();
            } catch (Exception e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(50); // poll interval before the next attempt, not synchronisation
            }
        }
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, UTF_8);
    }
}

package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.provider.etcd.EtcdClients;
import io.disco.provider.etcd.EtcdKeys;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One connected jetcd client and the timeout of every call: each answer is awaited at most
 * {@code --command-timeout}, so an unreachable cluster ends the command with {@link ExitCode#UNREACHABLE}
 * and a message naming the endpoints, never a hang (jetcd itself waits for ever when no endpoint answers).
 */
final class Etcd implements Cluster {

    private final Client client;
    private final List<String> endpoints;
    private final Duration timeout;

    Etcd(Client client, List<String> endpoints, Duration timeout) {
        this.client = client;
        this.endpoints = endpoints;
        this.timeout = timeout;
    }

    Client client() {
        return client;
    }

    Duration timeout() {
        return timeout;
    }

    /** Waits for one answer of etcd, at most the command timeout. */
    <T> T await(Supplier<CompletableFuture<T>> call, String what) {
        CompletableFuture<T> f;
        try {
            f = call.get();
        } catch (RuntimeException e) {
            throw new CliFailure(ExitCode.FAILED, "could not send the " + what + " to etcd: " + e.getMessage(), e);
        }
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw unreachable(what, e);
        } catch (ExecutionException e) {
            throw new CliFailure(
                    ExitCode.FAILED,
                    "etcd at " + String.join(",", endpoints) + " failed the " + what + ": " + describe(e.getCause()),
                    e.getCause());
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCode.FAILED, "interrupted while waiting for the " + what, e);
        }
    }

    CliFailure unreachable(String what, Throwable cause) {
        // Why, when the connection can tell (refused, unknown host, a failed TLS handshake and what to check ...).
        String why = EtcdClients.diagnose(
                        client, Duration.ofMillis(Math.min(1000, Math.max(200, timeout.toMillis() / 2))))
                .map(reason -> ": " + reason)
                .orElse(": is the cluster up, and are --endpoints, the TLS files and the credentials right?");
        return new CliFailure(
                ExitCode.UNREACHABLE,
                "no answer from etcd at " + String.join(",", endpoints) + " within " + millis(timeout) + " to the "
                        + what + why + " (--command-timeout waits longer)",
                cause);
    }

    @Override
    public String backend() {
        return "etcd";
    }

    /** {@link KeyLayout#detect}: from the keys present. */
    @Override
    public Optional<Primitive> detect(String name) {
        return KeyLayout.detect(this, name);
    }

    @Override
    public String nothingHolds(String name) {
        return KeyLayout.nothingHolds(name);
    }

    /** {@link EtcdKeys#isClaimOf}. */
    @Override
    public boolean isClaimOf(Primitive primitive, String name, String key) {
        return EtcdKeys.isClaimOf(primitive, name, key);
    }

    /** {@link EtcdKeys#nameOf}. */
    @Override
    public String nameOf(Primitive primitive, String name, String key) {
        return EtcdKeys.nameOf(primitive, name, key);
    }

    /** The lease's TTL left, read from etcd ({@code etcdctl lease timetolive}). */
    @Override
    public String ttlLeft(long leaseId) {
        long seconds = ttl(leaseId);
        if (seconds == Long.MIN_VALUE) {
            return "-";
        }
        return seconds < 0 ? "expired" : seconds + "s";
    }

    /** Who holds and waits for {@code name}, read without a lease ({@link EtcdProvider#claimants}). */
    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        try {
            return EtcdProvider.claimants(client, primitive, name, timeout);
        } catch (DiscoException e) {
            if (e.getCause() instanceof TimeoutException) {
                throw unreachable("listing of the claimants of " + name, e);
            }
            throw new CliFailure(ExitCode.FAILED, e.getMessage(), e);
        }
    }

    /**
     * The seconds a lease has left, as etcd tells it: -1 when the lease has expired or was revoked, and
     * {@code Long.MIN_VALUE} for a key without a lease.
     */
    long ttl(long leaseId) {
        if (leaseId == 0) {
            return Long.MIN_VALUE;
        }
        return await(() -> client.getLeaseClient().timeToLive(leaseId, LeaseOption.DEFAULT), "lease TTL read")
                .getTTL();
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    static String millis(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    private static String describe(Throwable t) {
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        if (m.contains("UNAUTHENTICATED") || m.contains("authentication failed") || m.contains("invalid auth token")) {
            return m + " (check --user and --password)";
        }
        if (m.contains("PERMISSION_DENIED") || m.contains("permission denied")) {
            return m + " (the user's role lacks a permission on these keys)";
        }
        return m;
    }

    @Override
    public void close() {
        client.close();
    }
}

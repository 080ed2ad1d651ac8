package io.disco.examples;

import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import io.disco.provider.etcd.EtcdSessionOwner;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The scenarios on etcd: one jetcd client of {@code endpoints} (opened and connected here, closed by
 * {@link #close()}); an owner is an {@link EtcdSession} (one lease), frozen with {@link EtcdSession#orphan()}.
 */
public final class EtcdDemoBackend implements DemoBackend {

    private static final Duration WAIT = Duration.ofSeconds(15);

    private final List<String> endpoints;
    private final Client client;

    private EtcdDemoBackend(List<String> endpoints, Client client) {
        this.endpoints = endpoints;
        this.client = client;
    }

    /**
     * Opens a client of {@code endpoints} and waits (at most 15 s) until etcd has answered.
     *
     * @param endpoints etcd client URLs
     * @return the backend; close it
     * @throws Exception if etcd did not answer
     */
    public static EtcdDemoBackend connect(List<String> endpoints) throws Exception {
        Client client = Cli.etcdClient(endpoints);
        try {
            Cli.connect(client, WAIT);
            return new EtcdDemoBackend(endpoints, client);
        } catch (Exception e) {
            client.close();
            throw e;
        }
    }

    /** @return the jetcd client, for what only etcd has (the resources' guards) */
    public Client client() {
        return client;
    }

    @Override
    public String describe() {
        return "etcd: " + String.join(",", endpoints);
    }

    @Override
    public DiscoBackend.Owner open() {
        return new EtcdSessionOwner(EtcdSession.open(client));
    }

    @Override
    public DiscoBackend.Owner open(Duration ttl) {
        return new EtcdSessionOwner(
                EtcdSession.open(client, EtcdOptions.builder().ttl(ttl).build()));
    }

    @Override
    public String freeze(DiscoBackend.Owner owner) {
        EtcdSession s = ((EtcdSessionOwner) owner).session();
        s.orphan();
        return "its keepalive stops, its lease expires within " + s.ttl().toSeconds() + " s";
    }

    @Override
    public IssuedBound issuedBound() {
        return EtcdIssuedBound.of(client);
    }

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return EtcdProvider.newLeadershipRunner(
                client, name, options, EtcdOptions.builder().ttl(ttl).build());
    }

    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return EtcdProvider.claimants(client, primitive, name, WAIT);
    }

    @Override
    public void deleteKey(String key) throws Exception {
        client.getKVClient()
                .delete(ByteSequence.from(key, StandardCharsets.UTF_8))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        client.close();
    }
}

package io.disco.provider.etcd;

import io.disco.client.DiscoBackend;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;

/**
 * The client's backend on etcd: an owner is an {@link EtcdSession} (one lease), its services the session's.
 * It is described by the jetcd client's endpoints, waits for an owner as long as the options'
 * {@linkplain EtcdOptions#ownerWait() owner wait}, and tells the client when the application closed the
 * jetcd client first.
 */
final class EtcdDiscoBackend implements DiscoBackend {

    private final Client client;
    private final EtcdOptions options;
    private final EtcdEndpoints endpoints;

    EtcdDiscoBackend(Client client, EtcdOptions options) {
        this.client = client;
        this.options = options;
        this.endpoints = EtcdEndpoints.of(client);
    }

    @Override
    public Owner open() {
        return new EtcdSessionOwner(EtcdSession.open(client, options));
    }

    @Override
    public String describe() {
        return endpoints.describe();
    }

    @Override
    public Duration ownerWait() {
        return options.ownerWait().orElse(options.ttl());
    }

    @Override
    public Optional<String> clientClosed() {
        return endpoints.closed() ? Optional.of(EtcdEndpoints.CLOSED_FIRST) : Optional.empty();
    }
}

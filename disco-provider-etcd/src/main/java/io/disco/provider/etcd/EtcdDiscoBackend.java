package io.disco.provider.etcd;

import io.disco.client.DiscoBackend;
import io.etcd.jetcd.Client;

/** The client's backend on etcd: an owner is an {@link EtcdSession} (one lease), its services the session's. */
final class EtcdDiscoBackend implements DiscoBackend {

    private final Client client;
    private final EtcdOptions options;

    EtcdDiscoBackend(Client client, EtcdOptions options) {
        this.client = client;
        this.options = options;
    }

    @Override
    public Owner open() {
        return new EtcdSessionOwner(EtcdSession.open(client, options));
    }

    @Override
    public String describe() {
        return "etcd";
    }
}

package io.disco.spring.scheduling;

import io.disco.client.Disco;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Test helpers around a real etcd. */
final class Etcd {

    private Etcd() {
    }

    static Client client(EtcdCluster etcd) {
        return Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build();
    }

    static Disco disco(Client client) {
        return EtcdProvider.disco(client, EtcdOptions.builder().ttl(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(5)).build());
    }

    /** A prefix no other test uses. */
    static String uniquePrefix(String name) {
        return "/test/" + name + "/" + UUID.randomUUID();
    }

    /** The keys under {@code name + "/"}, oldest first: the first one is the holder's. */
    static List<KeyValue> claims(Client client, String name) throws Exception {
        ByteSequence prefix = ByteSequence.from(name + "/", StandardCharsets.UTF_8);
        return client.getKVClient().get(prefix, GetOption.builder().isPrefix(true)
                        .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build())
                .get(5, TimeUnit.SECONDS).getKvs();
    }

    /** Revokes, with etcdctl, the lease of the holder of {@code name}; returns the holder's key. */
    static String revokeTheHolder(EtcdCluster etcd, Client client, String name) throws Exception {
        String key = claims(client, name).get(0).getKey().toString(StandardCharsets.UTF_8);
        etcd.etcdctl("lease", "revoke", key.substring(name.length() + 1));
        return key;
    }
}

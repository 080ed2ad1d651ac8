package io.disco.shedlock;

import io.disco.client.Disco;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.Client;
import java.time.Duration;

/**
 * The client these tests run on: a 10 s lease (the tests' timings are set against it: ShedLock's failed
 * on the default 30 s). Everything else a test needs of etcd is {@link io.disco.testservers.EtcdClaims}; this one
 * factory stays here because disco-test-servers cannot depend on the etcd provider (whose tests use it).
 */
final class Etcd {

    private Etcd() {}

    static Disco disco(Client client) {
        return EtcdProvider.disco(
                client,
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(10))
                        .requestTimeout(Duration.ofSeconds(5))
                        .build());
    }
}

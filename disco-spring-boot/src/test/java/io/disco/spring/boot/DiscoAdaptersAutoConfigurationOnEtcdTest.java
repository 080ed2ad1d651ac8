package io.disco.spring.boot;

import io.disco.testservers.EtcdExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link DiscoAdaptersAutoConfigurationTest} on the shared etcd member. */
class DiscoAdaptersAutoConfigurationOnEtcdTest extends DiscoAdaptersAutoConfigurationTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Override
    String[] backendProperties() {
        return new String[] {
            "disco.etcd.endpoints=" + String.join(",", ETCD.cluster().endpoints())
        };
    }
}

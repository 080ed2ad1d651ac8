package io.disco.provider.etcd;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** One real etcd member for a test class plus one connected jetcd client; both closed after the class. */
final class EtcdWithClient implements BeforeAllCallback, AfterAllCallback {

    private final EtcdExtension etcd = EtcdExtension.singleMember();
    private volatile Client client;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        etcd.beforeAll(context);
        client = Etcd.client(etcd.cluster());
        Etcd.revision(client); // connected before the first test's timed parts
    }

    @Override
    public void afterAll(ExtensionContext context) {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            etcd.afterAll(context);
        }
    }

    EtcdCluster cluster() {
        return etcd.cluster();
    }

    Client client() {
        return client;
    }
}

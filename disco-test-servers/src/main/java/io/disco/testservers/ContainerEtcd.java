package io.disco.testservers;

import java.time.Duration;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * Starts a single etcd member with Testcontainers. Testcontainers is an optional dependency, so
 * {@link EtcdCluster} loads this class only after checking that Testcontainers is on the class path.
 */
final class ContainerEtcd {

    static final String IMAGE = "gcr.io/etcd-development/etcd:v3.5.17";
    private static final int CLIENT_PORT = 2379;

    private ContainerEtcd() {}

    static boolean dockerAvailable() {
        return DockerClientFactory.instance().isDockerAvailable();
    }

    static EtcdCluster start() {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withExposedPorts(CLIENT_PORT)
                .withCommand(
                        "/usr/local/bin/etcd",
                        "--name=m0",
                        "--data-dir=/tmp/etcd-data",
                        "--listen-client-urls=http://0.0.0.0:" + CLIENT_PORT,
                        "--advertise-client-urls=http://127.0.0.1:" + CLIENT_PORT,
                        "--heartbeat-interval=10",
                        "--election-timeout=100",
                        "--unsafe-no-fsync",
                        "--auto-compaction-retention=0")
                .waitingFor(Wait.forHttp("/health")
                        .forPort(CLIENT_PORT)
                        .forResponsePredicate(body -> body.replace(" ", "").contains("\"health\":\"true\""))
                        .withStartupTimeout(Duration.ofSeconds(120)));
        try {
            container.start();
        } catch (RuntimeException e) {
            container.close();
            throw new IllegalStateException(
                    "cannot start etcd in a container (" + IMAGE + "): " + e.getMessage() + ". "
                            + EtcdBinary.INSTALL_HINT,
                    e);
        }
        String endpoint = "http://" + container.getHost() + ":" + container.getMappedPort(CLIENT_PORT);
        return EtcdCluster.container("etcd container " + IMAGE + ", 1 member", endpoint, container);
    }
}

package io.disco.testservers;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where a cluster comes from, in the order {@link EtcdCluster}'s class documentation gives:
 * {@value EtcdCluster#ENV_ENDPOINTS} (an external cluster), a local etcd binary, Testcontainers,
 * else a failure that says how to install etcd.
 */
final class ClusterResolver {

    private ClusterResolver() {}

    /** {@link EtcdCluster#start(int)} with {@code env} as the environment; {@code members} is at least 1. */
    static EtcdCluster resolve(int members, Map<String, String> env) {
        String external = env.get(EtcdCluster.ENV_ENDPOINTS);
        if (external != null && !external.isBlank()) {
            return external(external);
        }
        Path binary = EtcdBinary.find(env);
        if (binary != null) {
            return LocalClusterStarter.start(binary, members, null, List.of());
        }
        if (testcontainersPresent() && ContainerEtcd.dockerAvailable()) {
            return ContainerEtcd.start();
        }
        throw new IllegalStateException("No etcd found: " + EtcdCluster.ENV_ENDPOINTS + " and " + EtcdCluster.ENV_BINARY
                + " are not set, there is no etcd on PATH and no Docker engine answers. " + EtcdBinary.INSTALL_HINT);
    }

    /** An external cluster, once each of the comma-separated client URLs in {@code spec} reports healthy. */
    private static EtcdCluster external(String spec) {
        List<String> urls = Arrays.stream(spec.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toList());
        long deadline = System.nanoTime() + MemberHealth.START_TIMEOUT.toNanos();
        for (String url : urls) {
            while (!MemberHealth.healthy(MemberHealth.HTTP, url)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(
                            EtcdCluster.ENV_ENDPOINTS + "=" + spec + ": " + url + "/health did not report"
                                    + " healthy within " + MemberHealth.START_TIMEOUT.toSeconds() + " s");
                }
                sleep(50);
            }
        }
        return EtcdCluster.external("external etcd cluster " + urls + " (" + EtcdCluster.ENV_ENDPOINTS + ")", urls);
    }

    private static boolean testcontainersPresent() {
        try {
            Class.forName("org.testcontainers.DockerClientFactory", false, EtcdCluster.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for etcd", e);
        }
    }
}

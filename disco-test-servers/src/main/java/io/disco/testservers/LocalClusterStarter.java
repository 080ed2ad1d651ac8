package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starting a local {@link EtcdCluster} from an etcd binary: members on free loopback ports (tried
 * again on fresh ports when one was taken meanwhile) or each in a network namespace of its own, with
 * their data in a scratch directory; a cluster that does not start is closed again.
 */
final class LocalClusterStarter {

    private LocalClusterStarter() {}

    /** {@code size} members on loopback ports, with TLS when {@code tls} is not null and {@code flags} added. */
    static EtcdCluster start(Path binary, int size, EtcdTls tls, List<String> flags) {
        String description = "local " + EtcdBinary.version(binary) + " (" + binary + "), " + size + " member(s)"
                + (tls == null ? "" : tls.clientCertAuth() ? ", mutual TLS" : ", TLS")
                + (flags.isEmpty() ? "" : ", " + flags);
        return LocalResources.startOnFreePorts(
                () -> {
                    LocalCluster local = newLocal(binary, size, tls, flags);
                    return new LocalResources.PortAttempt<>(EtcdCluster.local(description, local), local::portTaken);
                },
                EtcdCluster::startLocal,
                EtcdCluster::close);
    }

    private static LocalCluster newLocal(Path binary, int size, EtcdTls tls, List<String> flags) {
        int[] ports = LocalResources.freePorts(2 * size, "etcd");
        Path workDir = LocalResources.scratchDir("disco-etcd-", "etcd");
        List<LocalMember> members = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            members.add(new LocalMember("m" + i, ports[2 * i], ports[2 * i + 1], workDir, tls, flags));
        }
        return new LocalCluster(binary, workDir, members, tls, null);
    }

    /** {@code members} members, each in a network namespace of its own (see {@link EtcdCluster#startNetworked}). */
    static EtcdCluster startNetworked(Path binary, int members) {
        MemberNetwork net = MemberNetwork.create(members);
        Path workDir;
        try {
            workDir = LocalResources.scratchDir("disco-etcd-", "etcd");
        } catch (UncheckedIOException e) {
            net.close();
            throw e;
        }
        List<LocalMember> list = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            list.add(new LocalMember("m" + i, net.address(i), net.launcher(i), 2379, 2380, workDir, null, List.of()));
        }
        PeerLinks peers;
        try {
            peers = PeerLinks.networked(net, 2380);
        } catch (RuntimeException e) {
            net.close();
            throw e;
        }
        EtcdCluster cluster = EtcdCluster.local(
                "local " + EtcdBinary.version(binary) + " (" + binary + "), " + members
                        + " member(s), each in its own network namespace, peer ports behind proxies",
                new LocalCluster(binary, workDir, list, null, net, peers));
        return LocalResources.startedOrClosed(cluster, cluster::startLocal, cluster::close);
    }

    /**
     * {@code members} members on loopback ports with their data under {@code dataRoot}, synced
     * ({@link LocalMember#durable}), and their peer ports behind {@link PeerLinks} (see
     * {@link EtcdCluster#startOnDisk}).
     */
    static EtcdCluster startOnDisk(Path binary, int members, Path dataRoot) {
        int[] ports = LocalResources.freePorts(2 * members, "etcd");
        Path workDir;
        try {
            workDir = Files.createTempDirectory(Files.createDirectories(dataRoot), "disco-etcd-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data dir for etcd under " + dataRoot, e);
        }
        List<LocalMember> list = new ArrayList<>();
        int[] peerPorts = new int[members];
        for (int i = 0; i < members; i++) {
            LocalMember m = new LocalMember("m" + i, ports[2 * i], ports[2 * i + 1], workDir, null, List.of());
            m.durable = true;
            list.add(m);
            peerPorts[i] = ports[2 * i + 1];
        }
        EtcdCluster cluster = EtcdCluster.local(
                "local " + EtcdBinary.version(binary) + " (" + binary + "), " + members
                        + " member(s), data synced under " + workDir + ", peer ports behind proxies",
                new LocalCluster(binary, workDir, list, null, null, PeerLinks.loopback(peerPorts)));
        return LocalResources.startedOrClosed(cluster, cluster::startLocal, cluster::close);
    }
}

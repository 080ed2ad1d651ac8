package io.disco.testservers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starting a {@link ZooKeeperEnsemble}: members on free loopback ports (tried again on fresh ports when one was
 * taken meanwhile) or each in a network namespace of its own; an ensemble that does not start is closed again.
 */
final class ZooKeeperEnsembleStarter {

    private ZooKeeperEnsembleStarter() {}

    /** {@code members} members on loopback ports (see {@link ZooKeeperEnsemble#start(int)}). */
    static ZooKeeperEnsemble start(int members) {
        if (members < 1) {
            throw new IllegalArgumentException("members must be at least 1, got " + members);
        }
        String classPath = ZooKeeperServerJars.classPath();
        Path java = ZooKeeperServerJars.java();
        return LocalResources.startOnFreePorts(
                () -> {
                    int[] ports = LocalResources.freePorts(3 * members, "ZooKeeper");
                    Path workDir = LocalResources.scratchDir("disco-zookeeper-", "ZooKeeper");
                    List<ZooKeeperMember> list = new ArrayList<>();
                    for (int i = 0; i < members; i++) {
                        list.add(new ZooKeeperMember(i + 1, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2], workDir));
                    }
                    return new LocalResources.PortAttempt<>(
                            new ZooKeeperEnsemble(workDir, list, java, classPath, null, null),
                            () -> list.stream()
                                    .anyMatch(m -> m.process.logTail().contains("Address already in use")));
                },
                ZooKeeperEnsemble::startAll,
                ZooKeeperEnsemble::close);
    }

    /** {@code members} members in a {@link MemberNetwork} (see {@link ZooKeeperEnsemble#startNetworked}). */
    static ZooKeeperEnsemble startNetworked(int members) {
        if (members < 1 || members > 100) {
            throw new IllegalArgumentException("members must be 1 to 100, got " + members);
        }
        String classPath = ZooKeeperServerJars.classPath();
        Path java = ZooKeeperServerJars.java();
        MemberNetwork net = MemberNetwork.create(members);
        PeerLinks peers;
        Path workDir;
        try {
            peers = PeerLinks.networked(net, 2888, 3888);
        } catch (RuntimeException e) {
            net.close();
            throw e;
        }
        try {
            workDir = LocalResources.scratchDir("disco-zookeeper-", "ZooKeeper");
        } catch (RuntimeException e) {
            peers.close();
            net.close();
            throw e;
        }
        List<ZooKeeperMember> list = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            list.add(new ZooKeeperMember(
                    i + 1, net.address(i), net.peerAddress(i), net.launcher(i), 2181, 2888, 3888, workDir));
        }
        ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(workDir, list, java, classPath, net, peers);
        return LocalResources.startedOrClosed(ensemble, ensemble::startAll, ensemble::close);
    }
}

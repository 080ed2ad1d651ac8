package io.disco.testservers;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The member processes of a local {@link EtcdCluster}: launching them as one cluster, waiting until
 * they report healthy, starting one again as the same member, and removing them with their data.
 * Not thread-safe: {@link EtcdCluster} serialises access. {@link LocalClusterStarter} makes them.
 */
final class LocalCluster {

    /** The binary members are started from. */
    final Path binary;
    /** The directory holding the members' data dirs and logs. */
    final Path workDir;
    /** The certificates members serve clients with, or null for plain HTTP. */
    final EtcdTls tls;
    /** The network namespaces members run in, or null for loopback. */
    final MemberNetwork network;
    /** The proxies in front of the members' peer ports, or null when members talk to each other directly. */
    final PeerLinks peerLinks;

    private final List<LocalMember> members;
    private final String clusterToken = "disco-" + UUID.randomUUID();
    /** Health checks go over HTTPS with the TLS context when there is TLS. */
    private final HttpClient health;

    LocalCluster(Path binary, Path workDir, List<LocalMember> members, EtcdTls tls, MemberNetwork network) {
        this(binary, workDir, members, tls, network, null);
    }

    /** With {@code peerLinks} in front of the members' peer ports: each member advertises its proxy's URL. */
    LocalCluster(
            Path binary,
            Path workDir,
            List<LocalMember> members,
            EtcdTls tls,
            MemberNetwork network,
            PeerLinks peerLinks) {
        this.peerLinks = peerLinks;
        if (peerLinks != null) {
            for (int i = 0; i < members.size(); i++) {
                members.get(i).advertisedPeerUrl = peerLinks.advertisedPeerUrl(i);
            }
        }
        this.binary = binary;
        this.workDir = workDir;
        this.members = List.copyOf(members);
        this.tls = tls;
        this.network = network;
        this.health = MemberHealth.client(tls);
    }

    /** @return the members' client URLs, in member order */
    List<String> endpoints() {
        return members.stream().map(LocalMember::endpoint).collect(Collectors.toList());
    }

    /**
     * @return member {@code member}
     * @throws IndexOutOfBoundsException if there is no such member
     */
    LocalMember member(int member) {
        return members.get(Objects.checkIndex(member, members.size()));
    }

    /** @return whether a member's log says its port was taken (by someone else since it was chosen) */
    boolean portTaken() {
        return members.stream().anyMatch(m -> m.logTail().contains("address already in use"));
    }

    /** Launches every member as a new cluster and waits until all report healthy. */
    void startAll() {
        for (LocalMember member : members) {
            launch(member, false);
        }
        awaitHealthy(members);
    }

    /** Launches a stopped member again with its data and waits until it is healthy; kills it if it is not. */
    void startAgain(LocalMember member) {
        launch(member, true);
        try {
            awaitHealthy(List.of(member));
        } catch (RuntimeException e) {
            member.kill();
            throw e;
        }
    }

    private void launch(LocalMember member, boolean existing) {
        String initialCluster =
                members.stream().map(m -> m.name + "=" + m.advertisedPeerUrl).collect(Collectors.joining(","));
        try {
            member.launch(binary, clusterToken, initialCluster, existing);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start etcd member " + member.name + " from " + binary + ": " + e.getMessage() + ". "
                            + EtcdBinary.INSTALL_HINT,
                    e);
        }
    }

    /** Polls {@code /health} of each member until all are healthy, one exits, or the deadline passes. */
    private void awaitHealthy(List<LocalMember> waitFor) {
        long deadline = System.nanoTime() + MemberHealth.START_TIMEOUT.toNanos();
        List<LocalMember> pending = new ArrayList<>(waitFor);
        while (!pending.isEmpty()) {
            pending.removeIf(m -> MemberHealth.healthy(health, m.endpoint()));
            for (LocalMember member : pending) {
                if (!member.isRunning()) {
                    throw new IllegalStateException(
                            "etcd member " + member.name + " exited while starting; log tail:\n" + member.logTail());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("etcd member " + member.name + " (" + member.endpoint()
                            + ") was not healthy within " + MemberHealth.START_TIMEOUT.toSeconds() + " s; log tail:\n"
                            + member.logTail());
                }
            }
            if (!pending.isEmpty()) {
                awaitExitOrPause(pending.get(0));
            }
        }
    }

    private static void awaitExitOrPause(LocalMember member) {
        try {
            member.awaitExit(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for etcd member " + member.name, e);
        }
    }

    /** @return the members' process ids (-1 for one never started) */
    List<Long> pids() {
        return members.stream().map(LocalMember::pid).collect(Collectors.toList());
    }

    /**
     * Kills every member, removes the network and deletes the work dir, attempting each whatever the
     * others do; what fails is added to {@code failure} as suppressed.
     */
    void close(IllegalStateException failure) {
        for (LocalMember member : members) {
            LocalResources.closeStep(member::kill, failure);
        }
        LocalResources.closeNetwork(peerLinks, network, failure);
        LocalResources.deleteTree(workDir, failure);
    }
}

package io.disco.testservers;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * What a test of a lock-based integration (ShedLock, Spring Integration, leader-only scheduling, ...)
 * needs of a real etcd besides the library: a jetcd client on a test cluster, names no other test uses,
 * the claims (keys) under a name in queue order, and taking the holder's lease away as an operator
 * would.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdExtension ETCD = EtcdExtension.sharedMember();
 *
 * try (Client client = EtcdClaims.client(ETCD.cluster()); Disco disco = EtcdProvider.disco(client)) {
 *     String name = EtcdClaims.uniquePrefix("report");
 *     ... take a lock on name ...
 *     EtcdClaims.revokeTheHolder(ETCD.cluster(), client, name);   // the holder learns of a lost lease
 * }
 * }</pre>
 *
 * <p>Every etcd read is bounded (5 s), so a hang becomes a failure.
 */
public final class EtcdClaims {

    private EtcdClaims() {}

    /**
     * A plain jetcd client on every member of {@code cluster} (no TLS, no user: for clusters started
     * without them).
     *
     * @param cluster the cluster
     * @return a new client; the caller closes it
     * @throws NullPointerException if {@code cluster} is null
     */
    public static Client client(EtcdCluster cluster) {
        Objects.requireNonNull(cluster, "cluster");
        return Client.builder()
                .endpoints(cluster.endpoints().toArray(String[]::new))
                .build();
    }

    /**
     * A name (key prefix) no other test uses, so that tests can share one etcd member.
     *
     * @param name what the test calls it, for example {@code "report"}
     * @return {@code /test/<name>/<random UUID>}
     * @throws NullPointerException if {@code name} is null
     */
    public static String uniquePrefix(String name) {
        Objects.requireNonNull(name, "name");
        return "/test/" + name + "/" + UUID.randomUUID();
    }

    /**
     * The keys under {@code name + "/"}, oldest first: for a lock, the first one is the holder's and the
     * others wait behind it.
     *
     * @param client a client on the cluster
     * @param name the lock's name
     * @return the keys with their values and leases, in order of creation
     * @throws NullPointerException if an argument is null
     * @throws Exception if etcd does not answer within 5 s, or fails
     */
    public static List<KeyValue> claims(Client client, String name) throws Exception {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(name, "name");
        ByteSequence prefix = ByteSequence.from(name + "/", StandardCharsets.UTF_8);
        return client.getKVClient()
                .get(
                        prefix,
                        GetOption.builder()
                                .isPrefix(true)
                                .withSortField(GetOption.SortTarget.CREATE)
                                .withSortOrder(GetOption.SortOrder.ASCEND)
                                .build())
                .get(5, TimeUnit.SECONDS)
                .getKvs();
    }

    /**
     * Revokes, with {@code etcdctl lease revoke}, the lease of the holder of the lock {@code name}: its
     * key goes, the next waiter holds, and the holder's client learns that its lease was lost. The
     * holder's key must be this library's, {@code <name>/<lease id in hex>}.
     *
     * @param cluster the cluster ({@link EtcdCluster#etcdctl} runs against it)
     * @param client a client on the cluster
     * @param name the lock's name
     * @return the holder's key
     * @throws NullPointerException if an argument is null
     * @throws IndexOutOfBoundsException if nobody holds {@code name}
     * @throws Exception if etcd does not answer within 5 s, or etcdctl fails
     */
    public static String revokeTheHolder(EtcdCluster cluster, Client client, String name) throws Exception {
        Objects.requireNonNull(cluster, "cluster");
        String key = claims(client, name).get(0).getKey().toString(StandardCharsets.UTF_8);
        cluster.etcdctl("lease", "revoke", key.substring(name.length() + 1));
        return key;
    }
}

package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** RedisClusterSet against real redis-server processes, through the run's shared cluster. */
class RedisClusterSetTest {

    @RegisterExtension
    static final RedisExtension CLUSTER = RedisExtension.sharedCluster();

    @Test
    void everyNodeIsOkAndServesAThirdOfTheSlots() {
        RedisClusterSet cluster = CLUSTER.cluster();
        assertEquals(cluster.uri(), CLUSTER.uri());
        List<RedisServer> nodes = cluster.nodes();
        assertEquals(3, nodes.size());
        assertEquals(cluster.nodes().get(0).uri(), cluster.uri());
        assertEquals(nodes.stream().map(RedisServer::uri).toList(), cluster.uris());
        for (RedisServer node : nodes) {
            String info = (String) node.command("CLUSTER", "INFO");
            assertTrue(info.contains("cluster_state:ok"), info);
            assertEquals("master", node.role());
            assertEquals("yes", node.config("cluster-enabled"));
        }
        assertThrows(IllegalStateException.class, CLUSTER::server);
    }

    @Test
    void aKeyWithAHashTagLandsOnTheNodeServingItsSlot() {
        RedisClusterSet cluster = CLUSTER.cluster();
        String key = "{RedisClusterSetTest}.token";
        long slot = (Long) cluster.nodes().get(0).command("CLUSTER", "KEYSLOT", key);
        assertEquals(slot, cluster.nodes().get(1).command("CLUSTER", "KEYSLOT", "{RedisClusterSetTest}.owner"));

        RedisServer owner = cluster.nodeServing(key);
        assertEquals("OK", owner.command("SET", key, "1"));
        assertEquals("1", owner.command("GET", key));
        for (RedisServer other : cluster.nodes()) {
            if (other != owner) {
                IllegalStateException moved =
                        assertThrows(IllegalStateException.class, () -> other.command("GET", key));
                assertEquals("MOVED " + slot + " 127.0.0.1:" + owner.port(), moved.getMessage());
            }
        }
        Set<RedisServer> serving = IntStream.range(0, 100)
                .mapToObj(i -> cluster.nodeServing("{" + i + "}"))
                .collect(Collectors.toSet());
        assertEquals(Set.copyOf(cluster.nodes()), serving);
    }

    @Test
    void withReplicasEachPrimaryHasOne() {
        try (RedisClusterSet cluster = RedisClusterSet.startWithReplicas()) {
            List<RedisServer> nodes = cluster.nodes();
            assertEquals(6, nodes.size());
            assertEquals(
                    List.of("master", "master", "master", "slave", "slave", "slave"),
                    nodes.stream().map(RedisServer::role).sorted().toList());
            for (RedisServer node : nodes) {
                String info = (String) node.command("CLUSTER", "INFO");
                assertTrue(info.contains("cluster_state:ok"), info);
            }
        }
    }
}

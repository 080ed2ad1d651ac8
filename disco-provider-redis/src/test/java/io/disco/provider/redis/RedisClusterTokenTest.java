package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.cluster.SlotHash;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TokenTest}'s tokens in a Cluster: strictly increasing per name, in the node's configEpoch; every key of a
 * name in one slot.
 */
class RedisClusterTokenTest {
    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.cluster();

    @Test
    void tokensIncreasePerNameInTheNodesEpochAndEveryKeyIsInOneSlot() throws Exception {
        String name = "/token/cluster/" + UUID.randomUUID();
        List<Long> tokens = DeploymentTokens.twice(REDIS.redisBackend(), name);
        assertTrue(tokens.get(0) >>> 43 > 0, "a cluster node's configEpoch is positive: " + tokens);
        int slot = SlotHash.getSlot(RedisKeys.tokens(name));
        for (String key : List.of(
                RedisKeys.queue(name),
                RedisKeys.claim(name, "0123456789abcdef"),
                RedisKeys.slots(name),
                RedisKeys.log(name),
                RedisKeys.channel(name))) {
            assertEquals(slot, SlotHash.getSlot(key), key);
        }
    }
}

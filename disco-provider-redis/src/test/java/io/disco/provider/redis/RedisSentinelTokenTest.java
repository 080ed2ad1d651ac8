package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link TokenTest}'s tokens under Sentinel: strictly increasing per name, in the sentinels' config epoch. */
class RedisSentinelTokenTest {
    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.sentinels();

    @Test
    void tokensIncreasePerNameInThePromotionsEpoch() throws Exception {
        String name = "/token/sentinel/" + UUID.randomUUID();
        List<Long> tokens = DeploymentTokens.twice(REDIS.redisBackend(), name);
        long epoch = tokens.get(0) >>> 43;
        Object sentinelEpoch = null;
        for (var s : REDIS.redis().sentinels().sentinelServers()) {
            @SuppressWarnings("unchecked")
            List<Object> master = (List<Object>) s.command("SENTINEL", "MASTER", "mymaster");
            for (int i = 0; i + 1 < master.size(); i += 2) {
                if ("config-epoch".equals(String.valueOf(master.get(i)))) {
                    sentinelEpoch = master.get(i + 1);
                }
            }
        }
        assertEquals(String.valueOf(sentinelEpoch), Long.toString(epoch), "the sentinels' config epoch");
    }
}

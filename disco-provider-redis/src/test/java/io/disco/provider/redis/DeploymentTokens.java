package io.disco.provider.redis;

import java.util.ArrayList;
import java.util.List;

/** Tokens of every primitive on one name, through two sessions of a backend, checked strictly increasing. */
final class DeploymentTokens {

    private DeploymentTokens() {}

    static List<Long> twice(RedisDiscoBackend backend, String name) throws Exception {
        List<Long> tokens = new ArrayList<>();
        try (RedisSession s = backend.open()) {
            tokens.addAll(TokenTest.tokensOfEveryPrimitive(s, name));
        }
        try (RedisSession s = backend.open()) {
            tokens.addAll(TokenTest.tokensOfEveryPrimitive(s, name));
        }
        TokenTest.assertStrictlyIncreasing(tokens);
        return tokens;
    }
}

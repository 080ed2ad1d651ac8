package io.disco.spring.boot;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code disco.integration.*} properties: Spring Integration's lock registry and leader initiators,
 * with disco-spring-integration on the class path. Checked when bound, like {@link DiscoProperties}.
 *
 * @param lockRegistry Spring Integration's {@code LockRegistry} bean
 * @param leader one leader initiator per role
 */
@ConfigurationProperties("disco.integration")
public record DiscoIntegrationProperties(
        @DefaultValue LockRegistry lockRegistry,
        @DefaultValue Leader leader) {

    /**
     * @param enabled whether to define a {@code DiscoLockRegistry} as the application's lock registry (when it
     *     defines no {@code LockRegistry} of its own)
     * @param prefix the prefix of the registry's disco names: a lock key is locked as {@code prefix + "/" + key};
     *     a disco name ({@code io.disco.client.Names}: absolute, not ending in {@code '/'})
     */
    public record LockRegistry(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("/spring-integration/locks") String prefix) {

        /**
         * Checks {@code disco.integration.lock-registry.prefix}.
         *
         * @param enabled whether to define a {@code DiscoLockRegistry} as the application's lock registry
         * @param prefix the prefix of the registry's disco names; a disco name ({@code io.disco.client.Names}: absolute, not ending in {@code '/'})
         */
        public LockRegistry {
            DiscoNames.require("disco.integration.lock-registry.prefix", prefix);
        }
    }

    /**
     * @param roles the roles this instance campaigns for, each with its election's disco name, for example
     *     {@code disco.integration.leader.roles.orders=/elections/orders}: one {@code DiscoLeaderInitiator} bean
     *     per role (named {@code discoLeaderInitiator.<role>}), publishing {@code OnGrantedEvent} and
     *     {@code OnRevokedEvent} for the role with the term's fencing token; none by default
     */
    public record Leader(@DefaultValue Map<String, String> roles) {

        /**
         * Checks {@code disco.integration.leader.roles}.
         *
         * @param roles the roles this instance campaigns for, each with its election's disco name
         */
        public Leader {
            roles = Collections.unmodifiableMap(new LinkedHashMap<>(roles));
            roles.forEach((role, election) -> {
                if (role.isBlank()) {
                    throw new IllegalArgumentException("disco.integration.leader.roles must not name a blank role");
                }
                DiscoNames.require("disco.integration.leader.roles." + role, election);
            });
        }
    }
}

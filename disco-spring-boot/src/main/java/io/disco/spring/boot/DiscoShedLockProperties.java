package io.disco.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code disco.shedlock.*} properties: ShedLock's {@code LockProvider} bean, with disco-shedlock on the
 * class path. Checked when bound, like {@link DiscoProperties}.
 *
 * @param enabled whether to define a {@code DiscoLockProvider} as ShedLock's lock provider (when the application
 *     defines no {@code LockProvider} of its own)
 * @param prefix the prefix of the lock provider's disco names: ShedLock's lock {@code name} is locked as
 *     {@code prefix + "/" + name}; a disco name ({@code io.disco.client.Names}: absolute, not ending in {@code '/'})
 */
@ConfigurationProperties("disco.shedlock")
public record DiscoShedLockProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("/shedlock") String prefix) {

    /**
     * Checks {@code disco.shedlock.prefix}.
     *
     * @param enabled whether to define a {@code DiscoLockProvider} as ShedLock's lock provider
     * @param prefix the prefix of the lock provider's disco names; a disco name ({@code io.disco.client.Names}: absolute, not ending in {@code '/'})
     */
    public DiscoShedLockProperties {
        DiscoNames.require("disco.shedlock.prefix", prefix);
    }
}

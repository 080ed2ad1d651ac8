package io.disco.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code disco.leader-only.*} properties: {@code @LeaderOnly} scheduled methods, with
 * disco-spring-scheduling on the class path.
 *
 * @param enabled whether {@code @LeaderOnly} is enabled (as {@code @EnableLeaderOnly} does) on the
 *     application's beans, with the auto-configured client
 */
@ConfigurationProperties("disco.leader-only")
public record DiscoLeaderOnlyProperties(
        @DefaultValue("true") boolean enabled) {}

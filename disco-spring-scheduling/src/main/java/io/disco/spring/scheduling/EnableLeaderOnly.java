package io.disco.spring.scheduling;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Enables {@link LeaderOnly} on the beans of this application context: put it on a {@code @Configuration}
 * class, next to {@code @EnableScheduling}. The context must have one {@code io.disco.client.Disco} bean, the
 * client the elections run on (the application owns and closes it).
 *
 * <p>It registers a bean post-processor that proxies the beans with {@code @LeaderOnly} methods, and a
 * lifecycle bean that starts one leadership runner per election name when the context starts and closes
 * them (waiting at most 10 s each for a leader-only method still running) when it stops.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import({LeaderOnlyElections.class, LeaderOnlyPostProcessor.class})
public @interface EnableLeaderOnly {}

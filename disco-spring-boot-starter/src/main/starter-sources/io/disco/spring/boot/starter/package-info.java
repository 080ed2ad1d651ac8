/**
 * disco's Spring Boot starter: this jar holds no code. Depending on it brings the auto-configuration
 * ({@code disco-spring-boot}, package {@code io.disco.spring.boot}), the {@code Disco} client
 * ({@code disco-client}), the three backends' providers: etcd with jetcd ({@code disco-provider-etcd}), ZooKeeper
 * with Curator ({@code disco-provider-zookeeper}) and Redis with Lettuce ({@code disco-provider-redis}), leader
 * election ({@code disco-election}), the guard
 * ({@code disco-guard}) and the Micrometer binding ({@code disco-micrometer}).
 *
 * <p>Add it, set {@code disco.etcd.endpoints} (etcd) or {@code disco.zookeeper.connect-string} (ZooKeeper), or
 * nothing in an application with Spring Data Redis ({@code spring.data.redis.*}: disco runs on that Redis), and
 * a Spring Boot 4.0 or 4.1 application gets the
 * {@code Disco} client, the {@code disco} health contributor and actuator endpoint, metrics, graceful
 * shutdown and, with {@code disco.guard.http.enabled=true}, the HTTP guard:
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>io.disco</groupId>
 *   <artifactId>disco-spring-boot-starter</artifactId>
 * </dependency>
 * }</pre>
 *
 * <p>The properties, the beans and their contracts are documented on
 * {@code io.disco.spring.boot.DiscoAutoConfiguration} and {@code io.disco.spring.boot.DiscoProperties}.
 */
package io.disco.spring.boot.starter;

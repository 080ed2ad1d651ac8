/**
 * Spring Boot test support for disco: {@link io.disco.spring.boot.testing.EtcdServiceConnection} connects a
 * {@code @SpringBootTest}'s auto-configured client to disco-test-servers's etcd with no bean and no property.
 */
package io.disco.spring.boot.testing;

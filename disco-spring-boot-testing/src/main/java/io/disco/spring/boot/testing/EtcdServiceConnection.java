package io.disco.spring.boot.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the etcd a Spring test context connects to, as Spring Boot's {@code @ServiceConnection} does for a
 * Testcontainers container: on a {@code static} field of type {@code io.disco.testservers.EtcdExtension} or
 * {@code io.disco.testservers.EtcdCluster} of the test class (or a superclass, or an enclosing class of a
 * {@code @Nested} one), it registers an {@code io.disco.spring.boot.EtcdConnectionDetails} bean with that
 * etcd's endpoints, which the auto-configuration prefers to {@code disco.etcd.endpoints}. No bean, no
 * property:
 *
 * <pre>{@code
 * @SpringBootTest
 * class OrdersTest {
 *     @RegisterExtension
 *     @EtcdServiceConnection
 *     static final EtcdExtension ETCD = EtcdExtension.sharedMember();
 * }
 * }</pre>
 *
 * <p>The endpoints are read when the bean is created, that is when the context loads: after the
 * extension's {@code beforeAll} has started the etcd. One annotated field per test class; a field of
 * another type, an instance field, or two annotated fields fail the test's context setup naming the
 * fields. TLS, credentials and the namespace stay with {@code disco.etcd.*}. Contexts of test classes
 * with different fields are not shared (Spring's context cache keys on the field).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface EtcdServiceConnection {}

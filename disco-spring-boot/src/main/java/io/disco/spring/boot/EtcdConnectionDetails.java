package io.disco.spring.boot;

import java.util.List;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;

/**
 * Where the auto-configured jetcd client connects: Spring Boot's service-connection contract for etcd.
 * By default made from {@code disco.etcd.*}; a bean of this type (a test's etcd, a platform's service
 * binding) takes precedence over the properties, so that a {@code @SpringBootTest} against a test etcd
 * needs no property wiring. TLS, the authority and the namespace stay with {@code disco.etcd.*}.
 */
public interface EtcdConnectionDetails extends ConnectionDetails {

    /**
     * @return the endpoints, for example {@code http://127.0.0.1:2379}; at least one, all {@code http://} or all
     *     {@code https://} (always TLS), as {@link io.disco.provider.etcd.EtcdClients} has it
     */
    List<String> endpoints();

    /** @return the etcd user, or null when etcd's authentication is off */
    default String user() {
        return null;
    }

    /** @return the user's password, or null */
    default String password() {
        return null;
    }

    /**
     * @param endpoints the endpoints, at least one
     * @return connection details with these endpoints and no credentials
     * @throws IllegalArgumentException if {@code endpoints} is empty
     */
    static EtcdConnectionDetails of(List<String> endpoints) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("endpoints must name at least one endpoint");
        }
        List<String> copy = List.copyOf(endpoints);
        return () -> copy;
    }
}

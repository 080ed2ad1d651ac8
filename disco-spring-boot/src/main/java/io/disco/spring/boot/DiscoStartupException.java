package io.disco.spring.boot;

import java.util.List;

/**
 * With {@code disco.fail-fast=true}, the auto-configured {@code Disco} client could not get its first owner (an
 * etcd lease, a ZooKeeper or Redis session), so the application does not start; or, whatever
 * {@code disco.fail-fast}, Redis refused it at startup because its settings would not keep tokens safe
 * ({@link #refused()}). Thrown by the backends' configurations'
 * {@code disco} beans only, around the provider's exception (its {@linkplain #getCause() cause}, whose message names
 * the endpoints and why they failed: refused, unknown host, TLS handshake, authentication, no answer), so that
 * {@link DiscoStartupFailureAnalyzer} reports this failure and no other. An {@link IllegalStateException}
 * rather than a {@code DiscoException}: the analyzer is loaded in every application that has this module,
 * also one without the client's modules on its class path.
 */
final class DiscoStartupException extends IllegalStateException {

    /** The backend that could not be reached, in the words of the report. */
    enum Backend {
        /** etcd: a lease, its endpoints. */
        ETCD("etcd", "lease", "Endpoints", "those of the application's own jetcd Client bean"),
        /** ZooKeeper: a session, its connect string. */
        ZOOKEEPER("ZooKeeper", "session", "Connect string", "that of the application's own CuratorFramework bean"),
        /** Redis: a session, the server (or the sentinels, or the cluster's nodes) of Boot's connection details. */
        REDIS("Redis", "session", "Redis", "those of the application's own RedisClusterClient bean");

        /** The backend's name. */
        final String name;
        /** What the client could not get from it. */
        final String owner;
        /** What its endpoints are called. */
        final String endpointsLabel;
        /** The endpoints when the application built the backend's client itself. */
        final String applicationsOwn;

        Backend(String name, String owner, String endpointsLabel, String applicationsOwn) {
            this.name = name;
            this.owner = owner;
            this.endpointsLabel = endpointsLabel;
            this.applicationsOwn = applicationsOwn;
        }
    }

    private final Backend backend;
    /** Whether the backend answered and refused the client (Redis's start check), rather than not being reached. */
    private final boolean refused;
    /** The endpoints the auto-configured backend client was built with; empty for the application's own client. */
    private final List<String> endpoints;

    /**
     * An etcd client that could not get its lease.
     *
     * @param endpoints the endpoints of the auto-configured jetcd client, or empty when the application
     *     defines its own client
     * @param cause the provider's failure to get the first lease
     */
    DiscoStartupException(List<String> endpoints, RuntimeException cause) {
        this(Backend.ETCD, endpoints, cause);
    }

    /**
     * @param backend the backend that could not be reached
     * @param endpoints the endpoints of the auto-configured backend client, or empty when the application defines
     *     its own client
     * @param cause the provider's failure to get the first owner
     */
    DiscoStartupException(Backend backend, List<String> endpoints, RuntimeException cause) {
        this(backend, endpoints, cause, false);
    }

    /**
     * @param backend the backend that could not be reached, or refused the client
     * @param endpoints the endpoints of the auto-configured backend client, or empty when the application defines
     *     its own client
     * @param cause the provider's failure to get the first owner
     * @param refused whether the backend refused the client, its settings unsafe for tokens (Redis's start check:
     *     persistence, eviction), rather than not being reached; such a start fails whatever {@code disco.fail-fast}
     */
    DiscoStartupException(Backend backend, List<String> endpoints, RuntimeException cause, boolean refused) {
        super(
                (refused
                                ? backend.name + " refused the disco client at startup: its settings would not keep"
                                        + " fencing tokens safe: "
                                : "disco.fail-fast=true and the disco client could not get its " + backend.owner
                                        + " from " + backend.name + " at startup: ")
                        + cause.getMessage(),
                cause);
        this.backend = backend;
        this.endpoints = List.copyOf(endpoints);
        this.refused = refused;
    }

    /** @return whether the backend refused the client for its settings, rather than not being reached */
    boolean refused() {
        return refused;
    }

    /** @return the backend that could not be reached */
    Backend backend() {
        return backend;
    }

    /** @return the endpoints of the auto-configured backend client; empty for the application's own client */
    List<String> endpoints() {
        return endpoints;
    }
}

package io.disco.spring.boot;

import java.util.List;

/**
 * With {@code disco.fail-fast=true}, the auto-configured {@code Disco} client could not get its first lease
 * from etcd, so the application does not start. Thrown by {@link DiscoAutoConfiguration#disco} only, around
 * the provider's exception (its {@linkplain #getCause() cause}, whose message names the endpoints and why
 * they failed: refused, unknown host, TLS handshake, authentication, no answer), so that
 * {@link DiscoStartupFailureAnalyzer} reports this failure and no other. An {@link IllegalStateException}
 * rather than a {@code DiscoException}: the analyzer is loaded in every application that has this module,
 * also one without the client's modules on its class path.
 */
final class DiscoStartupException extends IllegalStateException {

    /** The endpoints the auto-configured jetcd client was built with; empty for the application's own client. */
    private final List<String> endpoints;

    /**
     * @param endpoints the endpoints of the auto-configured jetcd client, or empty when the application
     *     defines its own client
     * @param cause the provider's failure to get the first lease
     */
    DiscoStartupException(List<String> endpoints, RuntimeException cause) {
        super(
                "disco.fail-fast=true and the disco client could not get its lease from etcd at startup: "
                        + cause.getMessage(),
                cause);
        this.endpoints = List.copyOf(endpoints);
    }

    /** @return the endpoints of the auto-configured jetcd client; empty for the application's own client */
    List<String> endpoints() {
        return endpoints;
    }
}

package io.disco.testservers;

import java.util.Objects;

/**
 * Where a Redis process listens: a host (always {@code 127.0.0.1} for the servers this package starts) and a port.
 *
 * @param host the host name or address
 * @param port the TCP port
 */
public record RedisAddress(String host, int port) {

    /**
     * @param host the host name or address
     * @param port the TCP port
     * @throws NullPointerException if {@code host} is null
     * @throws IllegalArgumentException if {@code port} is not a TCP port
     */
    public RedisAddress {
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("not a TCP port: " + port);
        }
    }

    /** @return {@code host:port} */
    @Override
    public String toString() {
        return host + ":" + port;
    }
}

package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code disco} health contributor: UP while the client has a live owner, an etcd lease, a ZooKeeper
 * session or a Redis session (details: its id as {@code lease}, its TTL (on ZooKeeper the negotiated session timeout), its remaining
 * validity, the names in use); DOWN while it has none, after a loss or while the backend could not be reached yet
 * (details: the last problem, naming the endpoints and the cause); OUT_OF_SERVICE once the client is closed (also
 * when the backend's client, jetcd's, Curator's or Lettuce's, was closed before it, which the last problem says).
 * Local and immediate: no request to the backend, and nothing an acquisition holds while it waits
 * ({@link Disco#status()}), so it answers while request threads wait in {@code lock()}.
 */
public class DiscoHealthIndicator implements HealthIndicator {

    private final Disco disco;

    /** @param disco the client whose status is reported */
    public DiscoHealthIndicator(Disco disco) {
        this.disco = disco;
    }

    @Override
    public Health health() {
        DiscoStatus status = disco.status();
        Health.Builder health = switch (status.state()) {
            case UP ->
                Health.up()
                        .withDetail("lease", status.owner().orElse(""))
                        .withDetail("ttl", status.ttl().toString())
                        .withDetail(
                                "remainingValidity", status.remainingValidity().toString());
            case HEALING -> Health.down();
            case CLOSED -> Health.outOfService();
        };
        health.withDetail("state", status.state().name()).withDetail("namesInUse", status.namesInUse());
        status.lastProblem().ifPresent(p -> health.withDetail("lastProblem", p));
        return health.build();
    }
}

package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.client.Holding;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The read-only actuator endpoint {@code disco}: the client's status and what this instance holds and
 * waits for (name, primitive, state, key, token, since). Local: no request to the backend. Expose it like any
 * endpoint ({@code management.endpoints.web.exposure.include=health,disco}).
 */
@Endpoint(id = "disco")
public class DiscoEndpoint {

    private final Disco disco;

    /** @param disco the client to report on */
    public DiscoEndpoint(Disco disco) {
        this.disco = disco;
    }

    /** @return {@code status} and {@code holdings} */
    @ReadOperation
    public Map<String, Object> disco() {
        DiscoStatus status = disco.status();
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("state", status.state().name());
        status.owner().ifPresent(o -> s.put("lease", o));
        s.put("ttl", status.ttl().toString());
        s.put("remainingValidity", status.remainingValidity().toString());
        s.put("namesInUse", status.namesInUse());
        status.lastProblem().ifPresent(p -> s.put("lastProblem", p));
        List<Map<String, Object>> holdings =
                disco.holdings().stream().map(DiscoEndpoint::describe).toList();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", s);
        out.put("holdings", holdings);
        return out;
    }

    private static Map<String, Object> describe(Holding h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", h.name());
        m.put("primitive", h.primitive());
        m.put("state", h.state().name());
        h.key().ifPresent(k -> m.put("key", k));
        h.token().ifPresent(t -> m.put("token", t.value()));
        m.put("since", h.since().toString());
        return m;
    }
}

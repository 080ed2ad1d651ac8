package io.disco.examples.bootapp;

import io.disco.election.LeadershipRunner;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /status}: what this instance leads and holds, as {@code key=value} lines ({@code instance},
 * {@code leading}, {@code leader-token}, {@code holding} as {@code order:token,...}), for the demo to read
 * without a JSON library. The actuator's {@code disco} endpoint shows the same and more.
 */
@RestController
public class StatusController {

    private final ExampleProperties properties;
    private final LeadershipRunner report;
    private final OrderController orders;

    StatusController(ExampleProperties properties, LeadershipRunner report, OrderController orders) {
        this.properties = properties;
        this.report = report;
        this.orders = orders;
    }

    /** @return this instance's status */
    @GetMapping("/status")
    public String status() {
        StringBuilder holding = new StringBuilder();
        orders.holding()
                .forEach((id, token) -> holding.append(holding.isEmpty() ? "" : ",")
                        .append(id)
                        .append(':')
                        .append(token));
        return "instance=" + properties.instance() + "\n"
                + "leading=" + report.leadership().isPresent() + "\n"
                + "leader-token="
                + report.leadership().map(l -> l.token().toString()).orElse("") + "\n"
                + "holding=" + holding + "\n";
    }
}

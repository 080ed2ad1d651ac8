package io.disco.examples.bootapp;

import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The example's own settings ({@code example.*}).
 *
 * @param instance this instance's name, the candidate value of its leadership
 * @param prefix the etcd prefix of the example's lock and election names
 * @param ledgerUrl the ledger every instance writes to (any instance serves one; the demo points both at
 *     the same one, so that a late write meets the mark a newer token left)
 * @param reportEvery how often the leader writes its report
 */
@ConfigurationProperties("example")
public record ExampleProperties(
        @DefaultValue("instance") String instance,
        @DefaultValue("/disco/examples/boot") String prefix,
        @DefaultValue("http://127.0.0.1:8080") URI ledgerUrl,
        @DefaultValue("500ms") Duration reportEvery) {}

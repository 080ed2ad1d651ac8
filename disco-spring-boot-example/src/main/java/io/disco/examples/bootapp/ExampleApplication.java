package io.disco.examples.bootapp;

import io.disco.client.Disco;
import io.disco.election.LeadershipRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The example application. Everything disco-related but its uses of the {@code Disco} client (the payment and
 * order controllers, and the report job below) comes from the starter and
 * {@code application.properties}: the jetcd client, the {@code Disco} client, health, graceful shutdown
 * and the guard on {@code /ledger/*}.
 */
@SpringBootApplication
@EnableConfigurationProperties(ExampleProperties.class)
public class ExampleApplication {

    /**
     * Starts the application.
     *
     * @param args Spring Boot arguments, for example {@code --server.port=8081 --disco.etcd.endpoints=...}
     */
    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }

    /**
     * The leader-only report job: a {@link LeadershipRunner} bean, so that the starter's graceful shutdown
     * steps it down first; the client closes it too.
     *
     * @param disco the starter's client
     * @param ledger where the job writes
     * @param properties the example's settings
     * @return the running runner
     */
    @Bean
    LeadershipRunner reportRunner(Disco disco, LedgerClient ledger, ExampleProperties properties) {
        return disco.leadershipRunner(
                properties.prefix() + "/report",
                LeadershipRunner.Options.of(properties.instance(), new ReportJob(ledger, properties.reportEvery())));
    }
}

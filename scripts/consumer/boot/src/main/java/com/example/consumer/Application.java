package com.example.consumer;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts the context (disco.etcd.endpoints given on the command line), takes a lock through the
 * auto-configured Disco bean, prints its token and the health of the disco contributor, then stops.
 */
@SpringBootApplication
public class Application {
    public static void main(String[] args) throws Exception {
        try (ConfigurableApplicationContext context = SpringApplication.run(Application.class, args)) {
            FencedLock lock = context.getBean(Disco.class).lock("/consumer-check/boot");
            if (!lock.tryLock(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no lock within 30 s");
            }
            try {
                System.out.println("token " + lock.token());
            } finally {
                lock.unlock();
            }
            var health = context.getBean(HealthEndpoint.class).healthForPath("disco");
            System.out.println("health " + (health == null ? "none" : health.getStatus()));
        }
    }
}

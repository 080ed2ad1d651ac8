package io.disco.spring.boot.boot35;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.util.Version;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * Issue 31, item 7: a Spring Boot 3.5.7 application with the starter (Netty 4.1 from Boot's dependency
 * management) fails at startup, at once, with a message that names the Netty found and the fix.
 */
class Boot35StartupTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Test
    void startupFailsAtOnceNamingTheNettyFoundAndTheFix() {
        String netty = Version.identify().get("netty-common").artifactVersion();
        assertThat(netty).as("Boot 3.5 manages Netty 4.1").startsWith("4.1.");

        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("disco.etcd.endpoints=http://127.0.0.1:1", "spring.main.banner-mode=off").run());
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(failure).isNotNull();
        Throwable root = failure;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        assertThat(root).isInstanceOf(IllegalStateException.class);
        assertThat(root.getMessage()).contains("disco needs Netty 4.2", "the class path has Netty " + netty,
                "Spring Boot 4.0", "<netty.version>4.2.18.Final</netty.version>");
        assertThat(took).as("at startup, before any request to etcd").isLessThan(Duration.ofSeconds(30));
    }
}

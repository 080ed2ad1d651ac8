package io.disco.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CliTest {

    @Test
    void endpointsComeFromTheFlagThenTheEnvironmentThenTheDefault() {
        Map<String, String> env = Map.of(Cli.ENV_ENDPOINTS, "10.0.0.1:2379,10.0.0.2:2379");
        assertEquals(
                List.of("http://a:1", "https://b:2"),
                Cli.parse(new String[] {"--endpoints", "a:1,https://b:2"}, 8080, env)
                        .endpoints());
        assertEquals(
                List.of("http://a:1"),
                Cli.parse(new String[] {"--endpoints=a:1"}, 8080, env).endpoints());
        assertEquals(
                List.of("http://10.0.0.1:2379", "http://10.0.0.2:2379"),
                Cli.parse(new String[0], 8080, env).endpoints());
        assertEquals(
                List.of("http://localhost:2379"),
                Cli.parse(new String[0], 8080, Map.of()).endpoints());
    }

    @Test
    void thePortIsAFlagOrABareNumber() {
        assertEquals(8080, Cli.parse(new String[0], 8080, Map.of()).port());
        assertEquals(9000, Cli.parse(new String[] {"9000"}, 8080, Map.of()).port());
        assertEquals(
                9001, Cli.parse(new String[] {"--port", "9001"}, 8080, Map.of()).port());
        assertEquals(
                9002,
                Cli.parse(new String[] {"--port=9002", "--endpoints", "x:1"}, 8080, Map.of())
                        .port());
    }

    @Test
    void badArgumentsAreRefusedWithTheUsage() {
        assertThrows(IllegalArgumentException.class, () -> Cli.parse(new String[] {"--port", "70000"}, 1, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Cli.parse(new String[] {"--bogus"}, 1, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Cli.parse(new String[] {"--endpoints"}, 1, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Cli.parse(new String[] {"--endpoints", ","}, 1, Map.of()));
    }
}

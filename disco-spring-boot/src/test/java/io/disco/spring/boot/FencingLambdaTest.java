package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A token given as a lambda ({@code FencingRequestInterceptor.of(() -> token)}, issue 45 item 8): it compiles (it
 * was an ambiguous call between {@code of(Fenced)} and {@code of(Supplier)}) and is read for each request, sent
 * to a real HTTP server. This is how a token taken on the holding thread travels to a request sent from another.
 */
class FencingLambdaTest {

    private HttpServer server;
    private final AtomicReference<String> received = new AtomicReference<>();

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            received.set(exchange.getRequestHeaders().getFirst(FencingHttp.HEADER));
            byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, ok.length);
            exchange.getResponseBody().write(ok);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Test
    void aLambdaGivesTheTokenOfEachRestClientRequest() {
        AtomicReference<FencingToken> current = new AtomicReference<>(FencingToken.of(34));
        RestClient rest = RestClient.builder()
                .baseUrl(base())
                .requestInterceptor(FencingRequestInterceptor.of(() -> current.get()))
                .build();
        assertThat(rest.post().uri("/w").retrieve().body(String.class)).isEqualTo("ok");
        assertThat(received.get()).isEqualTo("34");
        current.set(FencingToken.of(51));
        rest.post().uri("/w").retrieve().body(String.class);
        assertThat(received.get()).isEqualTo("51");

        FencingToken taken = FencingToken.of(77); // taken on the holding thread, sent from any
        RestClient fixed = RestClient.builder()
                .baseUrl(base())
                .requestInterceptor(FencingRequestInterceptor.of(() -> taken))
                .build();
        fixed.post().uri("/w").retrieve().body(String.class);
        assertThat(received.get()).isEqualTo("77");
    }

    @Test
    void aLambdaGivesTheTokenOfEachWebClientExchange() {
        FencingToken taken = FencingToken.of(90);
        WebClient web = WebClient.builder()
                .baseUrl(base())
                .clientConnector(new JdkClientHttpConnector())
                .filter(FencingExchangeFilter.of(() -> taken))
                .build();
        assertThat(web.post().uri("/w").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10)))
                .isEqualTo("ok");
        assertThat(received.get()).isEqualTo("90");
    }
}

package io.disco.examples.bootapp;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import java.net.http.HttpClient;
import java.time.Duration;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/**
 * Writes entries to the ledger ({@link ExampleProperties#ledgerUrl()}), each with the fencing token it was
 * made under in the {@value FencingHttp#HEADER} header. The token is passed in, not read at the time of
 * sending: what the writer had when it decided to write is what the ledger judges.
 */
@Component
public class LedgerClient {

    /** The ledger's answer: its status and body (a problem detail when it rejected the write). */
    public record Answer(int status, String body) {
        /** @return whether the ledger accepted the write */
        public boolean accepted() {
            return status / 100 == 2;
        }
    }

    private final RestClient rest;

    LedgerClient(ExampleProperties properties) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(Duration.ofSeconds(10));
        this.rest = RestClient.builder()
                .baseUrl(properties.ledgerUrl().toString())
                .requestFactory(factory)
                .build();
    }

    /**
     * Writes one entry.
     *
     * @param account the ledger account (the guard keeps one mark per account)
     * @param token the token the entry was made under
     * @param entry the entry
     * @return the ledger's answer, whatever its status
     */
    public Answer write(String account, FencingToken token, String entry) {
        ResponseEntity<String> answer = rest.put()
                .uri("/ledger/{account}", account)
                .header(FencingHttp.HEADER, token.toString())
                .body(entry)
                .retrieve()
                .onStatus(HttpStatusCode::isError, (request, response) -> {})
                .toEntity(String.class);
        return new Answer(answer.getStatusCode().value(), answer.getBody() == null ? "" : answer.getBody());
    }
}

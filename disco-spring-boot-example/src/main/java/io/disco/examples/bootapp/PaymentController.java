package io.disco.examples.bootapp;

import io.disco.client.BackendUnavailableException;
import io.disco.client.Disco;
import io.disco.client.Names;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingHttp;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * {@code POST /payments/{account}}: takes the account's lock, writes the payment to the ledger (a guarded
 * resource) with the lock's fencing token, and answers with the ledger's answer. docs/spring-boot.md shows
 * this file as it is (SpringBootDocTest compares them).
 */
@RestController
public class PaymentController {

    private static final Logger LOG = LoggerFactory.getLogger(PaymentController.class);

    private final Disco disco;
    private final RestClient ledger;

    PaymentController(Disco disco, @Value("${example.ledger-url:http://127.0.0.1:8080}") String ledgerUrl) {
        this.disco = disco; // the starter's client: one per application, shared by every request
        this.ledger = RestClient.create(ledgerUrl);
    }

    /**
     * Writes a payment to an account's ledger, holding the account's lock.
     *
     * @param account the account
     * @param amount the amount paid
     * @return the ledger's answer (200, or its 409 problem detail: a newer holder wrote first), or 409 when
     *     another request held the account's lock for the whole wait
     * @throws InterruptedException if the request's thread is interrupted while it waits for the lock
     */
    @PostMapping("/payments/{account}")
    public ResponseEntity<?> pay(@PathVariable String account, @RequestParam long amount) throws InterruptedException {
        FencedLock lock = disco.lock("/payments/" + Names.segment(account));
        if (!lock.tryLock(2, TimeUnit.SECONDS)) { // bounded: a request thread never waits in lock()
            return ResponseEntity.of(ProblemDetail.forStatusAndDetail(
                            HttpStatus.CONFLICT,
                            "account " + account + " is busy: another request holds its lock; try again"))
                    .build();
        }
        ResponseEntity<String> answer;
        try {
            answer = ledger.put()
                    .uri("/ledger/{account}", account)
                    .header(FencingHttp.HEADER, lock.token().toString()) // what the ledger's guard judges
                    .body("paid " + amount)
                    .retrieve()
                    .onStatus(HttpStatusCode::isError, (request, response) -> {}) // a 409 is an answer too
                    .toEntity(String.class);
        } finally {
            try {
                lock.unlock();
            } catch (LockLostException e) {
                // The hold ended before this release (a pause past the TTL, its key deleted). The ledger has
                // judged the write by its token already: 200 if no newer holder had written, else 409. That
                // answer stands; thrown on, this exception would turn it into a 500.
                LOG.warn("payment to {}: the lock was lost before its release: {}", account, e.getMessage());
            }
        }
        return ResponseEntity.status(answer.getStatusCode())
                .contentType(answer.getHeaders().getContentType())
                .body(answer.getBody());
    }

    /**
     * etcd could not be used. From {@code tryLock}: {@link BackendUnavailableException} when the client has had no
     * lease for longer than {@code disco.session.owner-wait}, another {@code DiscoException} when etcd did not
     * answer in time; from {@code lock.token()}, the hold ended before it: nothing was written. From
     * {@code unlock()}, etcd did not answer the release in time: the release goes on in the background, and the
     * ledger's answer is lost to this 503.
     *
     * @param e names the endpoints and the cause, for the log rather than the caller
     * @return 503
     */
    @ExceptionHandler(DiscoException.class)
    ProblemDetail unavailable(DiscoException e) {
        LOG.warn("payment refused: {}", e.getMessage());
        return ProblemDetail.forStatusAndDetail(
                HttpStatus.SERVICE_UNAVAILABLE, "the lock service is unavailable; try again later");
    }
}

package io.disco.examples.bootapp;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /orders/{id}}: a lock taken inside a request. The request takes the order's lock through the
 * starter's {@code Disco} client, reads its token once, does its work (the {@code workMillis} parameter: how long
 * it takes, so that the demo can freeze the process in the middle), and writes the order to the ledger
 * with that token. The ledger's answer is relayed: 200, or its 409 problem detail when a newer holder of
 * the order has written meanwhile.
 */
@RestController
public class OrderController {

    private static final Logger LOG = LoggerFactory.getLogger(OrderController.class);
    private static final long LOCK_WAIT_SECONDS = 30;

    private final Disco disco;
    private final LedgerClient ledger;
    private final ExampleProperties properties;
    private final Map<String, FencingToken> holding = new ConcurrentHashMap<>();

    OrderController(Disco disco, LedgerClient ledger, ExampleProperties properties) {
        this.disco = disco;
        this.ledger = ledger;
        this.properties = properties;
    }

    /**
     * Books an order.
     *
     * @param id the order
     * @param workMillis how long the work between taking the lock and writing takes, in milliseconds
     * @return the ledger's answer (200, or its problem detail), or 503 when the lock was not had in time
     * @throws InterruptedException if the request's thread is interrupted while waiting or working
     */
    @PostMapping("/orders/{id}")
    public ResponseEntity<String> book(@PathVariable String id, @RequestParam(defaultValue = "0") long workMillis)
            throws InterruptedException {
        FencedLock lock = disco.lock(properties.prefix() + "/orders/" + id);
        if (!lock.tryLock(LOCK_WAIT_SECONDS, TimeUnit.SECONDS)) {
            return ResponseEntity.status(503).body("order " + id + " is busy\n");
        }
        FencingToken token = lock.token();
        holding.put(id, token);
        LedgerClient.Answer answer;
        try {
            LOG.info("order {}: holding its lock with token {}, working for {} ms", id, token, workMillis);
            Thread.sleep(workMillis); // the work; a pause here (GC, SIGSTOP) outlives the lease
            answer = ledger.write("order-" + id, token, properties.instance() + " booked order " + id);
            LOG.info("order {}: the ledger answered {} to token {}", id, answer.status(), token);
        } finally {
            holding.remove(id, token);
            try {
                lock.unlock();
            } catch (LockLostException e) {
                LOG.warn("order {}: the lock was lost while working (token {}): {}", id, token, e.getMessage());
            }
        }
        MediaType type = answer.accepted() ? MediaType.TEXT_PLAIN : MediaType.APPLICATION_PROBLEM_JSON;
        return ResponseEntity.status(answer.status()).contentType(type).body(answer.body());
    }

    /** @return the orders whose lock a request holds right now, with its token */
    Map<String, FencingToken> holding() {
        return Map.copyOf(holding);
    }
}

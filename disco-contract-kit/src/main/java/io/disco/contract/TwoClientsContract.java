package io.disco.contract;

import io.disco.client.Disco;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the contracts on two clients share: before each test, two clients of their own (TTL 10 s), closed after it
 * with the rest the test opened.
 */
abstract class TwoClientsContract extends ContractSupport {

    Disco disco;
    Disco other; // another process, as far as the backend can tell: its own owner

    @BeforeEach
    void openClients() {
        disco = client(10);
        other = client(10);
    }
}

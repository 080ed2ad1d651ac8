package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.testservers.RedisExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code Disco.close()} returns with the connections it opened on the application's Lettuce client closed, on a
 * standalone server and under sentinels (whose connections the token lineage adds). Lettuce closes a connection
 * asynchronously and forgets it only once closed: a client shut down just after a close that did not wait for them
 * still lists them, closes them again and logs "Connection is already closed" for each, at every shutdown of an
 * application that closes its beans in order.
 */
class ClosedConnectionsTest {

    @RegisterExtension
    static final RedisExtension SERVER = RedisExtension.sharedServer();

    @RegisterExtension
    static final RedisExtension SENTINELS = RedisExtension.sharedSentinels();

    /** A Lettuce client that tells how many connections it lists (those its shutdown would close). */
    static final class CountingClient extends RedisClient {
        int listed() {
            return getResourceCount();
        }
    }

    @Test
    void aClosedDiscoLeavesNoConnectionListedOnAStandaloneServersClient() throws Exception {
        closesItsConnections(SERVER.uri(), "/closed-connections/standalone");
    }

    @Test
    void aClosedDiscoLeavesNoConnectionListedUnderSentinels() throws Exception {
        closesItsConnections(SENTINELS.uri(), "/closed-connections/sentinels");
    }

    private static void closesItsConnections(String uri, String name) throws Exception {
        CountingClient client = new CountingClient();
        try {
            assertEquals(0, client.listed());
            Disco disco = RedisProvider.disco(client, RedisURI.create(uri), RedisOptions.defaults());
            assertTrue(disco.barrier(name + "/barrier").await(Duration.ofSeconds(10)), "a barrier nobody raised");
            FencedLock lock = disco.lock(name + "/lock");
            lock.lock();
            lock.unlock();
            assertTrue(client.listed() > 0, "the Disco opened no connection on the client");
            disco.close();
            assertEquals(
                    0,
                    client.listed(),
                    "connections of the closed Disco that the client still lists (its shutdown closes them again and"
                            + " logs a warning for each)");
        } finally {
            client.shutdown();
        }
    }
}

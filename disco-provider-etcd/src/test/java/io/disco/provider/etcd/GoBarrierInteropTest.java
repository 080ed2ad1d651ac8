package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.Barrier;
import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Java and real Go programs at the same barriers (issue 50): etcd's own {@code recipe.Barrier} and
 * {@code recipe.DoubleBarrier} (etcd 3.4, Debian's {@code golang-etcd-server-dev}) and the client's {@link Barrier}
 * and {@link DoubleBarrier}, both ways: a Go holder holds Java waiters up and the other way round, and Go and Java
 * participants enter together and leave together. Nothing is left under the names afterwards.
 */
class GoBarrierInteropTest {

    /** A member of its own: Go's barrier wait needs the hold to be the last write (see the test of a Java holder). */
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final Duration WAITING = Duration.ofMillis(400);
    private static final Duration SOON = Duration.ofSeconds(5);
    private static Client client;
    private static Disco disco;

    @BeforeAll
    static void connect() {
        client = Etcd.client(ETCD.cluster());
        disco = EtcdProvider.disco(client, ttl(30));
    }

    @AfterAll
    static void disconnect() {
        disco.close();
        client.close();
    }

    private static GoRecipes go() throws Exception {
        return GoRecipes.start(ETCD.cluster().endpoints(), 30);
    }

    private static void assertWaiting(CompletableFuture<?> f) {
        await("must still wait").during(WAITING).atMost(WAITING.plusSeconds(2)).until(() -> !f.isDone());
    }

    private static CompletableFuture<Void> async(Blocking call) {
        return CompletableFuture.runAsync(() -> {
            try {
                call.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private interface Blocking {
        void run() throws InterruptedException;
    }

    @Test
    void aGoHolderHoldsJavaWaitersUp() throws Exception {
        String name = uniquePrefix("go-barrier-a");
        Barrier barrier = disco.barrier(name);
        try (GoRecipes go = go()) {
            go.send("hold " + name).expect("held", SOON);
            assertTrue(barrier.isHeld());
            assertFalse(barrier.hold(), "Go's barrier is up: the same key");
            CompletableFuture<Void> waiting = async(barrier::await);
            assertWaiting(waiting);
            go.send("release " + name).expect("released", SOON);
            waiting.get(5, SECONDS);
        }
        assertFalse(barrier.isHeld());
    }

    @Test
    void aJavaHolderHoldsGoWaitersUp() throws Exception {
        String name = uniquePrefix("go-barrier-b");
        Barrier barrier = disco.barrier(name);
        try (GoRecipes go = go()) {
            assertTrue(barrier.hold());
            go.send("hold " + name).expect("error", SOON); // Go's Hold refuses a barrier that is up
            // Go's Wait reads the key, then waits for a PUT and then a DELETE of it from the revision it read at: it
            // sees the hold's PUT only when the hold was the last write in the cluster, else it waits for the barrier
            // to go up and down once more. Hence a member of this class's own, with no write between the two
            // (docs/barrier.md, "Interoperability").
            go.send("wait " + name).expectNothing(WAITING);
            assertTrue(barrier.release());
            go.expect("waited", SOON);
        }
        assertFalse(barrier.isHeld());
    }

    @Test
    void goAndJavaParticipantsEnterTogetherAndLeaveTogether() throws Exception {
        String name = uniquePrefix("go-double-barrier");
        DoubleBarrier first = disco.doubleBarrier(name, 3);
        DoubleBarrier last = disco.doubleBarrier(name, 3);
        try (GoRecipes go = go()) {
            go.send("enter " + name + " 3"); // the lowest key: Go's leave waits on the highest
            await().atMost(SOON)
                    .until(() -> keysUnder(client, name + "/waiters").size() == 1);
            CompletableFuture<Void> entering = async(first::enter);
            await().atMost(SOON)
                    .until(() -> keysUnder(client, name + "/waiters").size() == 2);
            assertWaiting(entering);
            go.expectNothing(Duration.ZERO);
            assertTrue(last.enter(SOON), "the third completes the count: Java opens it for Go too");
            go.expect("entered", SOON);
            entering.get(5, SECONDS);

            CompletableFuture<Void> leaving = async(first::leave);
            assertWaiting(leaving);
            go.send("leave").expectNothing(WAITING); // Go waits for the highest key: the last Java participant
            assertFalse(leaving.isDone(), "a Java participant left while Go's was inside");
            assertTrue(last.leave(SOON), "the last out, once Go has left");
            go.expect("left", SOON);
            leaving.get(5, SECONDS);
        }
        await().atMost(SOON).until(() -> keysUnder(client, name).isEmpty()); // the ready mark too
    }
}

package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.DiscoException;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.TcpProxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The reproduction of a double barrier defect the barrier workload's runs pointed at (an owner's {@code ERROR <r>
 * leave DiscoException etcd could not be reached: no answer to leave ... within 1000 ms}): a participant whose
 * {@code leave()} fails with a {@link DiscoException} while its owner lives is back {@code OUTSIDE}, but its key stays
 * registered on the owner's lease, so its partners' {@code leave()} waits for it until their timeout (or the owner's
 * end), and nothing but closing the client removes it ({@code leave()} on an {@code OUTSIDE} handle throws). The
 * client removes the key after a failed {@code enter()}, after a {@code leave()} that timed out or was interrupted,
 * not after a failed one ({@code ClientDoubleBarrier.leaveUntil}). Participant a reaches the one etcd member through
 * a proxy, which is closed (connections reset, the port refusing) for 4 s, under a's 10 s TTL: a's {@code leave(20
 * s)} fails after its 1 s request timeout; the proxy is opened again on the same port, a's client reconnects and
 * keeps its lease; b's {@code leave(5 s)} then ran out with a's key still there (on e1f923b). Now a failed leave
 * removes the key in the background, as a timed-out one does.
 */
class DoubleBarrierLeaveFailureTest {

    private static final String NAME = "/repro/round";

    @Test
    void aLeaveThatFailsLeavesNoKeyCounted() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            URI member = URI.create(etcd.endpoint(0));
            InetSocketAddress target = new InetSocketAddress(member.getHost(), member.getPort());
            TcpProxy proxy = new TcpProxy(target);
            int port = proxy.port();
            Duration ttl = Duration.ofSeconds(10);
            Duration request = Duration.ofSeconds(1);
            try (Disco a = Disco.over(OwnerBackend.of("http://127.0.0.1:" + port, ttl, request));
                    Disco b = Disco.over(OwnerBackend.of(etcd.endpoint(0), ttl, request))) {
                DoubleBarrier pa = a.doubleBarrier(NAME, 2);
                DoubleBarrier pb = b.doubleBarrier(NAME, 2);
                CompletableFuture<Boolean> entering = CompletableFuture.supplyAsync(() -> {
                    try {
                        return pa.enter(Duration.ofSeconds(10));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertTrue(pb.enter(Duration.ofSeconds(10)));
                assertTrue(entering.get(10, TimeUnit.SECONDS));
                proxy.close(); // a cut off: its connections reset, its port refusing; its delete cannot reach etcd
                assertThrows(DiscoException.class, () -> pa.leave(Duration.ofSeconds(20)));
                assertEquals(DoubleBarrier.State.OUTSIDE, pa.state());
                Thread.sleep(4000); // the rest of the cut (4 s in all after the failure): a fault's length, not a wait
                try (TcpProxy healed = new TcpProxy(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), port), target, d -> null)) {
                    boolean bLeft = pb.leave(Duration.ofSeconds(5));
                    String waiters = etcd.etcdctl("get", "--prefix", "--keys-only", NAME + "/waiters/")
                            .strip();
                    assertEquals(DiscoStatus.State.UP, a.status().state(), "a's owner lives");
                    assertTrue(
                            bLeft,
                            "b's leave() waited for a participant whose handle is OUTSIDE; keys left: " + waiters);
                }
            }
        }
    }
}

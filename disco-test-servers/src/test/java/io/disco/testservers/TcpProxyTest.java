package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The proxy's link faults bite and keep the stream intact: a slow link delays each round trip by
 * about twice its delay, a lossy one stalls some of them by a retransmission timeout, every byte
 * arrives in order, and healing makes the link fast again.
 */
class TcpProxyTest {

    private static final int ROUNDS = 20;

    @Test
    void slowAndLossyLinksDelayRoundTripsAndKeepTheStreamIntact() throws Exception {
        try (ServerSocket echo = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread server = new Thread(() -> {
                try (Socket s = echo.accept();
                        InputStream in = s.getInputStream();
                        OutputStream out = s.getOutputStream()) {
                    in.transferTo(out);
                } catch (Exception e) {
                    // the test closed it
                }
            });
            server.setDaemon(true);
            server.start();
            try (TcpProxy proxy =
                            new TcpProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
                    Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
                client.setSoTimeout(10_000);
                long clean = slowestRoundTripMillis(client);
                proxy.degrade(TcpProxy.Link.ofMillis(50, 10, 0));
                long slowest = slowestRoundTripMillis(client);
                assertTrue(
                        slowest >= 80,
                        "a 50 ± 10 ms link each way: slowest round trip " + slowest + " ms, clean " + clean);
                proxy.degrade(TcpProxy.Link.ofMillis(0, 0, 0.25));
                long lossy = slowestRoundTripMillis(client);
                // no stall in 2 x 20 chunks has a chance of 0.75^40, about 1e-5
                assertTrue(
                        lossy >= 200,
                        "a quarter of the chunks lost: some round trip stalls by an RTO, slowest " + lossy + " ms");
                proxy.degrade(TcpProxy.Link.CLEAN);
                long healed = slowestRoundTripMillis(client);
                assertTrue(healed < 80, "healed: slowest round trip " + healed + " ms");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> TcpProxy.Link.ofMillis(10, 20, 0), "jitter above the delay");
        assertThrows(IllegalArgumentException.class, () -> TcpProxy.Link.ofMillis(0, 0, 1.0), "loss of everything");
    }

    /** {@value #ROUNDS} round trips of a distinct message each; the slowest, in ms. */
    private static long slowestRoundTripMillis(Socket client) throws Exception {
        long slowest = 0;
        for (int i = 0; i < ROUNDS; i++) {
            byte[] sent = ("message " + i + " " + System.nanoTime()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long start = System.nanoTime();
            client.getOutputStream().write(sent);
            client.getOutputStream().flush();
            byte[] got = client.getInputStream().readNBytes(sent.length);
            slowest = Math.max(slowest, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            assertArrayEquals(sent, got, "the stream arrives intact and in order");
        }
        return slowest;
    }
}

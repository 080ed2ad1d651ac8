package io.disco.testservers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A TCP proxy from a listening address to one target, for fault tests and benchmarks, which can be
 * switched to a blackhole: the connections stay open and nothing is forwarded either way (bytes that
 * arrive meanwhile are held back, then delivered on healing, as a network that drops and retransmits
 * would). That is a partition of whoever connects through it, without closing a socket.
 *
 * <p>It can also make the link slow or lossy ({@link #degrade}), which the kernel here cannot (no
 * {@code netem}): each chunk read is forwarded after a delay drawn from {@code delay ± jitter}, never
 * before the chunk ahead of it (TCP keeps order); with probability {@code loss} a chunk is "lost" and
 * stalls for a retransmission timeout (200–600 ms, Linux's minimum RTO being 200 ms), holding up
 * everything behind it, which is what a dropped segment does to a TCP stream. A link can be set for
 * all connections or for those of one dialer ({@link #degradeFrom}), told apart by source address.
 *
 * <p>Each accepted connection is forwarded on threads of its own (daemon threads), so a target that
 * does not answer holds up no other connection. Instances are thread-safe; {@link #close()} closes
 * the listening socket and every connection.
 */
public final class TcpProxy implements AutoCloseable {

    private static final int CONNECT_TIMEOUT_MILLIS = 2000;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Function<InetAddress, InetAddress> sourceFor;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Map<InetAddress, Link> dialerLinks = new ConcurrentHashMap<>();
    private final Object gate = new Object();
    private volatile boolean blackhole;
    private volatile Link link = Link.CLEAN;
    private volatile boolean closed;

    /**
     * A proxy on a free loopback port ({@link #port()}) to {@code target}.
     *
     * @param target where connections are forwarded to
     * @throws IOException if no port can be bound
     */
    public TcpProxy(InetSocketAddress target) throws IOException {
        this(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), target, dialer -> null);
    }

    /**
     * A proxy listening on {@code listen} to {@code target}, whose connection to the target for a
     * dialer comes from the address {@code sourceFor} gives for the dialer's address (null: any), so
     * that the target (and rules there) can tell the dialers apart.
     *
     * @param listen the address and port to listen on (port 0: a free one)
     * @param target where connections are forwarded to
     * @param sourceFor a dialer's address to the local address its forwarded connection binds to, or null
     * @throws IOException if {@code listen} cannot be bound
     */
    public TcpProxy(InetSocketAddress listen, InetSocketAddress target, Function<InetAddress, InetAddress> sourceFor)
            throws IOException {
        this.target = Objects.requireNonNull(target, "target");
        this.sourceFor = Objects.requireNonNull(sourceFor, "sourceFor");
        this.server = new ServerSocket();
        server.bind(Objects.requireNonNull(listen, "listen"), 50);
        Thread accept = new Thread(this::accept, "proxy-accept-" + port());
        accept.setDaemon(true);
        accept.start();
    }

    /** @return the port the proxy listens on */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Stops forwarding (true) or resumes it (false), on every connection.
     *
     * @param on whether the link is cut
     */
    public void blackhole(boolean on) {
        blackhole = on;
        if (!on) {
            synchronized (gate) {
                gate.notifyAll();
            }
        }
    }

    /**
     * How chunks are held back: {@code delay ± jitter}, and a stall of 200–600 ms with probability
     * {@code loss}.
     *
     * @param delay the added one-way delay, at least zero
     * @param jitter how far a chunk's delay may be from {@code delay}, 0 to {@code delay}
     * @param loss the probability of a stall, 0 (inclusive) to 1 (exclusive)
     */
    public record Link(Duration delay, Duration jitter, double loss) {
        /** No delay, no loss. */
        public static final Link CLEAN = new Link(Duration.ZERO, Duration.ZERO, 0);

        /**
         * Checks the values.
         *
         * @param delay the added one-way delay, at least zero
         * @param jitter how far a chunk's delay may be from {@code delay}, 0 to {@code delay}
         * @param loss the probability of a stall, 0 (inclusive) to 1 (exclusive)
         * @throws IllegalArgumentException if a value is out of range
         * @throws NullPointerException if {@code delay} or {@code jitter} is null
         */
        public Link {
            Objects.requireNonNull(delay, "delay");
            Objects.requireNonNull(jitter, "jitter");
            if (delay.isNegative() || jitter.isNegative() || jitter.compareTo(delay) > 0 || !(loss >= 0 && loss < 1)) {
                throw new IllegalArgumentException("a link needs 0 <= jitter <= delay and 0 <= loss < 1, got " + delay
                        + " ± " + jitter + ", loss " + loss);
            }
        }

        /**
         * @param delayMillis the delay in milliseconds
         * @param jitterMillis the jitter in milliseconds
         * @param loss the probability of a stall
         * @return the link
         */
        public static Link ofMillis(long delayMillis, long jitterMillis, double loss) {
            return new Link(Duration.ofMillis(delayMillis), Duration.ofMillis(jitterMillis), loss);
        }

        /** @return how long a chunk read now is held back, in nanoseconds */
        long holdNanos() {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            long jitterNanos = jitter.toNanos();
            long nanos = delay.toNanos() + (jitterNanos == 0 ? 0 : r.nextLong(-jitterNanos, jitterNanos + 1));
            if (loss > 0 && r.nextDouble() < loss) {
                nanos += TimeUnit.MILLISECONDS.toNanos(200 + r.nextLong(401));
            }
            return nanos;
        }
    }

    /**
     * Makes every connection slow or lossy, both ways ({@link Link#CLEAN} heals it); a link set for
     * a dialer ({@link #degradeFrom}) takes precedence.
     *
     * @param link the link
     */
    public void degrade(Link link) {
        this.link = Objects.requireNonNull(link, "link");
    }

    /**
     * Makes the connections of one dialer slow or lossy, both ways; {@link Link#CLEAN} heals them.
     *
     * @param dialer the source address of the dialer's connections
     * @param link the link
     */
    public void degradeFrom(InetAddress dialer, Link link) {
        Objects.requireNonNull(dialer, "dialer");
        if (Objects.requireNonNull(link, "link").equals(Link.CLEAN)) {
            dialerLinks.remove(dialer);
        } else {
            dialerLinks.put(dialer, link);
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket in = server.accept();
                sockets.add(in);
                Thread connect = new Thread(() -> forward(in), "proxy-connect-" + port());
                connect.setDaemon(true);
                connect.start();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void forward(Socket in) {
        Socket out = new Socket();
        sockets.add(out);
        InetAddress dialer = in.getInetAddress();
        try {
            InetAddress source = sourceFor.apply(dialer);
            if (source != null) {
                out.bind(new InetSocketAddress(source, 0));
            }
            out.connect(target, CONNECT_TIMEOUT_MILLIS);
            // Forward each chunk as it comes: with Nagle's algorithm on, a small write behind an unacknowledged
            // one waits for the peer's delayed ACK (40 ms on Linux), a stall no real gRPC or ZooKeeper link has.
            in.setTcpNoDelay(true);
            out.setTcpNoDelay(true);
            pump(in, out, dialer);
            pump(out, in, dialer);
        } catch (IOException e) {
            // the target refused (a killed member): the client sees its connection close and retries
            closeQuietly(in);
            closeQuietly(out);
        }
    }

    /** A chunk read, to be written at {@code dueNanos}; an empty one marks the end of the stream. */
    private record Chunk(byte[] bytes, long dueNanos) {}

    /**
     * One direction: a reader that stamps each chunk with when it is due, and a writer that writes
     * the chunks in order, each when due and while the proxy is open.
     */
    private void pump(Socket from, Socket to, InetAddress dialer) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(
                () -> {
                    byte[] buf = new byte[16 * 1024];
                    long lastDue = 0;
                    try (InputStream in = from.getInputStream()) {
                        for (int n; (n = in.read(buf)) >= 0; ) {
                            long due = Math.max(
                                    lastDue,
                                    System.nanoTime()
                                            + dialerLinks
                                                    .getOrDefault(dialer, link)
                                                    .holdNanos());
                            lastDue = due;
                            queue.add(new Chunk(java.util.Arrays.copyOf(buf, n), due));
                        }
                    } catch (IOException e) {
                        // closed on one side
                    } finally {
                        queue.add(new Chunk(new byte[0], lastDue));
                    }
                },
                "proxy-read-" + port());
        Thread writer = new Thread(
                () -> {
                    try (OutputStream out = to.getOutputStream()) {
                        while (true) {
                            Chunk c = queue.take();
                            long wait = c.dueNanos() - System.nanoTime();
                            if (wait > 0) {
                                TimeUnit.NANOSECONDS.sleep(wait); // the link's delay
                            }
                            if (c.bytes().length == 0) {
                                return;
                            }
                            awaitOpen();
                            out.write(c.bytes());
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // closed on one side
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                        sockets.remove(from);
                        sockets.remove(to);
                    }
                },
                "proxy-write-" + port());
        for (Thread t : List.of(reader, writer)) {
            t.setDaemon(true);
            t.start();
        }
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (blackhole && !closed) {
                gate.wait(100);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** Closes the listening socket and every connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        blackhole(false);
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        sockets.forEach(TcpProxy::closeQuietly);
    }
}

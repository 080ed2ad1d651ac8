package io.disco.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy from a loopback port to one target, which the nemesis can switch to a blackhole: the
 * connections stay open and nothing is forwarded either way (bytes that arrive meanwhile are held
 * back, then delivered on healing, as a network that drops and retransmits would). That is a
 * partition of whoever connects through it, without closing a socket.
 *
 * <p>It can also make the link slow or lossy ({@link #degrade}), which the kernel here cannot (no
 * {@code netem}): each chunk read is forwarded after a delay drawn from {@code delay ± jitter}, never
 * before the chunk ahead of it (TCP keeps order); with probability {@code loss} a chunk is "lost" and
 * stalls for a retransmission timeout (200–600 ms, Linux's minimum RTO being 200 ms), holding up
 * everything behind it, which is what a dropped segment does to a TCP stream.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean blackhole;
    private volatile Link link = Link.CLEAN;
    private volatile boolean closed;

    TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "proxy-accept-" + port());
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Stops forwarding (true) or resumes it (false). */
    void blackhole(boolean on) {
        blackhole = on;
        if (!on) {
            synchronized (gate) {
                gate.notifyAll();
            }
        }
    }

    /**
     * How chunks are held back: {@code delayMillis ± jitterMillis}, and a stall of 200–600 ms with
     * probability {@code loss}.
     */
    record Link(long delayMillis, long jitterMillis, double loss) {
        static final Link CLEAN = new Link(0, 0, 0);

        Link {
            if (delayMillis < 0 || jitterMillis < 0 || jitterMillis > delayMillis || loss < 0 || loss >= 1) {
                throw new IllegalArgumentException("a link needs 0 <= jitter <= delay and 0 <= loss < 1, got " + delayMillis
                        + " ± " + jitterMillis + " ms, loss " + loss);
            }
        }

        /** @return how long a chunk read now is held back, in nanoseconds */
        long holdNanos() {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            long millis = delayMillis + (jitterMillis == 0 ? 0 : r.nextLong(-jitterMillis, jitterMillis + 1));
            if (loss > 0 && r.nextDouble() < loss) {
                millis += 200 + r.nextLong(401);
            }
            return TimeUnit.MILLISECONDS.toNanos(millis);
        }
    }

    /** Makes the link slow or lossy, both ways ({@link Link#CLEAN} heals it). */
    void degrade(Link link) {
        this.link = link;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                out.connect(target, 2000);
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // the target refused (a killed member): the client sees its connection close and retries
            }
        }
    }

    /** A chunk read, to be written at {@code dueNanos}; an empty one marks the end of the stream. */
    private record Chunk(byte[] bytes, long dueNanos) {
    }

    /**
     * One direction: a reader that stamps each chunk with when it is due, and a writer that writes
     * the chunks in order, each when due and while the proxy is open.
     */
    private void pump(Socket from, Socket to) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            long lastDue = 0;
            try (InputStream in = from.getInputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    long due = Math.max(lastDue, System.nanoTime() + link.holdNanos());
                    lastDue = due;
                    queue.add(new Chunk(java.util.Arrays.copyOf(buf, n), due));
                }
            } catch (IOException e) {
                // closed on one side
            } finally {
                queue.add(new Chunk(new byte[0], lastDue));
            }
        }, "proxy-read-" + port());
        Thread writer = new Thread(() -> {
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
            }
        }, "proxy-write-" + port());
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

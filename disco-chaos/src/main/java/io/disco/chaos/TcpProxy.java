package io.disco.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy from a loopback port to one target, which the nemesis can switch to a blackhole: the
 * connections stay open and nothing is forwarded either way (bytes that arrive meanwhile are held
 * back, then delivered on healing, as a network that drops and retransmits would). That is a
 * partition of whoever connects through it, without closing a socket.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean blackhole;
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

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    awaitOpen();
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // closed on one side
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pump-" + port());
        t.setDaemon(true);
        t.start();
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

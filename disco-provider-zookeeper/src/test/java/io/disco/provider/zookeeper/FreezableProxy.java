package io.disco.provider.zookeeper;

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
 * A TCP relay between one client and the ZooKeeper server that can be frozen, as a process stopped with
 * SIGSTOP would be: once frozen, no byte passes in either direction (new connections are accepted, and hang), so
 * the server expires the session after its timeout while the client hears nothing. Nothing is dropped: what was
 * sent while frozen is held (in the relay's buffer and the sockets' own) and delivered on {@link #thaw()}, as by a
 * member resumed with SIGCONT. {@link #freezeReplies()} holds only what the server sends (a request is delivered
 * and applied, its answer held back), and {@link #dropConnections()} closes the connections open now, losing
 * what they held back: the client sees its connection lost and connects again through the relay.
 */
final class FreezableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    /** Guards the freeze flags; pumps wait on it while their direction is frozen. */
    private final Object gate = new Object();

    private boolean frozen;
    private boolean repliesFrozen;
    private volatile boolean closed;
    private final List<Connection> connections = new CopyOnWriteArrayList<>();

    FreezableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "zk-proxy-accept-" + server.getLocalPort());
        accept.setDaemon(true);
        accept.start();
    }

    String connectString() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Stops forwarding in both directions, holding every byte, until {@link #thaw()} or {@link #close()}; returns at once. */
    void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    /** Stops forwarding what the server sends (requests still reach it), until {@link #thaw()}; returns at once. */
    void freezeReplies() {
        synchronized (gate) {
            repliesFrozen = true;
        }
    }

    /** Delivers what was held back and forwards again, both ways; returns at once. */
    void thaw() {
        synchronized (gate) {
            frozen = false;
            repliesFrozen = false;
            gate.notifyAll();
        }
    }

    /** Closes every connection open now, with what it held back; later connections are relayed as usual. */
    void dropConnections() {
        for (Connection c : connections) {
            connections.remove(c);
            c.close();
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
                in.setTcpNoDelay(true); // as TcpProxy: no Nagle stall behind a delayed ACK
                out.setTcpNoDelay(true);
                Connection c = new Connection(in, out);
                connections.add(c);
                if (closed) {
                    c.close();
                    return;
                }
                pump(c, in, out, false);
                pump(c, out, in, true);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Connection c, Socket from, Socket to, boolean toClient) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[8192];
                    try (InputStream i = from.getInputStream();
                            OutputStream o = to.getOutputStream()) {
                        int n;
                        while ((n = i.read(buf)) >= 0) {
                            synchronized (gate) {
                                while ((frozen || toClient && repliesFrozen) && !closed && !c.dropped) {
                                    gate.wait(); // held, not dropped: delivered on thaw()
                                }
                            }
                            if (closed || c.dropped) {
                                return;
                            }
                            o.write(buf, 0, n);
                            o.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // closed
                    } finally {
                        c.close();
                        connections.remove(c);
                    }
                },
                "zk-proxy-pump-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Connection c : connections) {
            c.close();
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    /** One relayed connection: the client's socket and the server's. */
    private static final class Connection {
        private final Socket in;
        private final Socket out;
        volatile boolean dropped;

        Connection(Socket in, Socket out) {
            this.in = in;
            this.out = out;
        }

        void close() {
            dropped = true;
            closeQuietly(in);
            closeQuietly(out);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing
        }
    }
}

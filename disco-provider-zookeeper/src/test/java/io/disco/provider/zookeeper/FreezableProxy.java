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
import java.util.concurrent.CountDownLatch;

/**
 * A TCP relay between one client and the ZooKeeper server that can be frozen, as a process stopped with
 * SIGSTOP would be: once frozen, no byte passes in either direction and new connections hang, so the server
 * expires the session after its timeout while the client hears nothing.
 */
final class FreezableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final CountDownLatch thawed = new CountDownLatch(1);
    private volatile boolean frozen;
    private volatile boolean closed;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

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

    void freeze() {
        frozen = true;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
                in.setTcpNoDelay(true); // as TcpProxy: no Nagle stall behind a delayed ACK
                out.setTcpNoDelay(true);
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                int n;
                while ((n = i.read(buf)) >= 0) {
                    if (frozen) {
                        thawed.await(); // frozen for good, until close()
                    }
                    if (closed) {
                        return;
                    }
                    o.write(buf, 0, n);
                    o.flush();
                }
            } catch (IOException | InterruptedException e) {
                // closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "zk-proxy-pump-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        closed = true;
        thawed.countDown();
        closeQuietly(server);
        for (Socket s : sockets) {
            closeQuietly(s);
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

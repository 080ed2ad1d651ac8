package io.disco.provider.zookeeper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Why the servers of a connect string could not be reached, in a few words for a message: ZooKeeper's client
 * retries every server in a loop and says nothing, so a failed connection is looked at once more here: each
 * server's name resolved, a TCP connection tried. Pure diagnosis: it sends nothing. Public for the {@code disco}
 * tool, which says the same when ZooKeeper does not answer it (as {@code EtcdClients.diagnose} is for etcd).
 */
public final class ZooKeeperEndpoints {

    private ZooKeeperEndpoints() {}

    /**
     * @param connectString {@code host:port,host:port[/chroot]}
     * @param within how long each connection attempt may take
     * @return per server what went wrong, for example {@code zk-0:2181: connection refused (nothing listens on the
     *     port); zk-1:2181: unknown host (DNS)}; or that every server accepts a connection but did not answer
     */
    public static String diagnose(String connectString, Duration within) {
        String servers = connectString;
        int chroot = servers.indexOf('/');
        if (chroot >= 0) {
            servers = servers.substring(0, chroot);
        }
        List<String> found = new ArrayList<>();
        boolean anyAccepts = false;
        for (String server : servers.split(",")) {
            String hostPort = server.trim();
            int colon = hostPort.lastIndexOf(':');
            String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
            int port;
            try {
                port = colon < 0 ? 2181 : Integer.parseInt(hostPort.substring(colon + 1));
            } catch (NumberFormatException e) {
                found.add(hostPort + ": not host:port");
                continue;
            }
            InetAddress address;
            try {
                address = InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                found.add(hostPort + ": unknown host, the name could not be resolved (DNS)");
                continue;
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(address, port), (int) Math.max(100, within.toMillis()));
                anyAccepts = true;
                found.add(hostPort + ": accepts connections but did not complete ZooKeeper's handshake");
            } catch (ConnectException e) {
                found.add(hostPort
                        + (String.valueOf(e.getMessage()).contains("refused")
                                ? ": connection refused, nothing listens on the port"
                                : ": the connection failed (" + e.getMessage() + ")"));
            } catch (NoRouteToHostException e) {
                found.add(hostPort + ": no route to host");
            } catch (SocketTimeoutException e) {
                found.add(hostPort + ": no answer to a connection within " + within.toMillis() + " ms");
            } catch (IOException e) {
                found.add(hostPort + ": " + e);
            }
        }
        return String.join("; ", found)
                + (anyAccepts ? " (the server is overloaded, frozen or not ZooKeeper; or TLS is" + " expected)" : "");
    }
}

package io.disco.provider.zookeeper;

import io.disco.fencing.DiscoException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * What a {@link ZooKeeperDiscoBackend} and its {@code withTtl} backends share for their test hooks: their open owners
 * (a session can be ended from outside only with its password, which its own client holds), the admin client the
 * hooks read and write through (built on first use), and the loopback port frozen owners are pointed at. Closed by
 * the backend that made it.
 */
final class BackendHooks {

    /** The open owners, to find a session's password by its id. */
    final Set<SessionOwner> owners = ConcurrentHashMap.newKeySet();

    private CuratorFramework admin;
    /** A loopback port bound and never listened on: connections to it are refused. */
    private Socket nowhere;

    private boolean closed;

    /**
     * @param builder how to build the admin client, if it is not built yet
     * @return the admin client, started
     */
    synchronized CuratorFramework admin(CuratorFrameworkFactory.Builder builder) {
        checkOpen();
        if (admin == null) {
            admin = builder.build();
            admin.start();
        }
        return admin;
    }

    /** @return the connect string of a loopback port that refuses every connection, held until closed */
    synchronized String nowhere() {
        checkOpen();
        if (nowhere == null) {
            Socket s = new Socket();
            try {
                s.bind(new InetSocketAddress("127.0.0.1", 0));
            } catch (IOException e) {
                try {
                    s.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw new DiscoException("could not bind a loopback port to freeze owners on: " + e, e);
            }
            nowhere = s;
        }
        return "127.0.0.1:" + nowhere.getLocalPort();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the ZooKeeperDiscoBackend is closed");
        }
    }

    /** Closes the admin client and the port; the owners are their callers' to close. Idempotent. */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (admin != null) {
                admin.close();
            }
        } finally {
            if (nowhere != null) {
                try {
                    nowhere.close();
                } catch (IOException e) {
                    // a socket that never connected: nothing to lose
                }
            }
        }
    }

    /** Closes the session of {@code handle} on the server through a second handle with its id and password. */
    static void endSession(ZooKeeper handle, String connectString) throws Exception {
        long id = handle.getSessionId();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(
                connectString,
                handle.getSessionTimeout(),
                e -> {
                    if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                id,
                handle.getSessionPasswd());
        try {
            if (!connected.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not attach to session 0x" + Long.toHexString(id) + " at "
                        + connectString + " within 5 s");
            }
        } finally {
            twin.close(); // ends the session on the server: its ephemeral nodes are deleted
        }
    }

    /**
     * Adds to {@code into} the ephemeral nodes under {@code path}, at any depth, as full paths; persistent nodes are
     * descended into, not listed.
     */
    static void collectEphemerals(CuratorFramework admin, String path, List<String> into) throws Exception {
        List<String> children;
        try {
            children = admin.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        for (String child : children) {
            String p = path + "/" + child;
            Stat s = admin.checkExists().forPath(p);
            if (s == null) {
                continue;
            }
            if (s.getEphemeralOwner() != 0) {
                into.add(p);
            } else if (s.getNumChildren() > 0) {
                collectEphemerals(admin, p, into);
            }
        }
    }
}

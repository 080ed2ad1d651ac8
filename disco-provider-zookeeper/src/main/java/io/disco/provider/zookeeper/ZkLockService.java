package io.disco.provider.zookeeper;

import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code InterProcessMutex} protocol behind {@link LockService}: the own node is
 * {@code <name>/_c_<uuid>-lock-<sequence>}, ephemeral-sequential on this owner's session; the first in sequence
 * order holds the lock, every other waits on its predecessor. The token is the own node's czxid (zxids are
 * totally ordered across the ensemble's history and a successor's node is created after its predecessor's was),
 * not the sequence number, which is a per-parent signed 32-bit counter that restarts when Curator's container
 * parent is deleted, after which a new owner's number would be below a zombie's. Nested names exclude one way
 * ({@link #nestedBlocker}). This class holds the lock's hooks ({@link QueueProtocol}) and its calls; it makes
 * itself on a session ({@link #create}), and the grant's lifecycle is {@link ZkQueueService}'s.
 */
final class ZkLockService extends ZkQueueService<Grant, LockLostException> implements LockService {

    private static final List<NodeKind> QUEUE = List.of(NodeKind.LOCK);

    private ZkLockService(SessionCore core, String name) {
        super(core, name, Primitive.LOCK, "lock");
    }

    /**
     * Makes the lock on {@code name} and registers it on its session.
     *
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if the session has a service on {@code name}, or is closed or lost
     */
    static ZkLockService create(SessionCore core, String name) {
        String checked = ZooKeeperNodes.checkName(name);
        return core.register(checked, false, () -> new ZkLockService(core, checked));
    }

    @Override
    List<NodeKind> queueKinds() {
        return QUEUE;
    }

    @Override
    String blocker(List<String> queue, int own, NodeKind kind) {
        return own == 0 ? null : queue.get(own - 1);
    }

    /**
     * Nested names exclude one way, as on etcd (where a lock's range {@code <name>/} holds its nested names'
     * keys): a claimant of {@code /a} waits, once first in its own queue, for every holder or waiter of a nested
     * name ({@code /a/b}, at any depth) whose node was created before its own; a claimant of {@code /a/b} never
     * waits for {@code /a}. The nested directories are read only when there are any.
     */
    @Override
    String nestedBlocker(List<String> children, NodeKind kind, long ownCzxid) throws Exception {
        for (String child : children) {
            if (NodeKind.of(child) == null) {
                String found = olderEphemeral(child, ownCzxid);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    private String olderEphemeral(String relative, long ownCzxid) throws Exception {
        List<String> children;
        try {
            children = core.client().getChildren().forPath(ZKPaths.makePath(name, relative));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        for (String child : children) {
            String rel = relative + "/" + child;
            Stat s = core.client().checkExists().forPath(ZKPaths.makePath(name, rel));
            if (s == null) {
                continue;
            }
            if (s.getEphemeralOwner() != 0) {
                if (s.getCzxid() < ownCzxid) {
                    return rel;
                }
            } else if (s.getNumChildren() > 0) {
                String found = olderEphemeral(rel, ownCzxid);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    @Override
    Grant grant(String node, NodeKind kind, Stat own) {
        return new Grant(node, FencingToken.of(own.getCzxid()));
    }

    @Override
    LockLostException lostException(String message, Throwable cause) {
        return new LockLostException(message, cause);
    }

    @Override
    public Grant lock() throws InterruptedException {
        try {
            return acquire(NodeKind.LOCK, null, "lock.lock()", core.claimData());
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Grant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(NodeKind.LOCK, requireTimeout(timeout), "lock.lock()", core.claimData());
    }

    @Override
    public Optional<Grant> tryLock() {
        return tryAcquire(NodeKind.LOCK, "lock.tryLock()");
    }

    @Override
    public CompletableFuture<Grant> lockAsync() {
        return acquireAsync(NodeKind.LOCK, core.claimData());
    }

    @Override
    public void unlock() {
        release(NodeKind.LOCK, "lock.unlock()");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync(NodeKind.LOCK, "lock.unlock()");
    }
}

package io.disco.provider.zookeeper;

import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code InterProcessReadWriteLock} protocol behind {@link RWLockService}, with fencing tokens.
 *
 * <h2>Nodes</h2>
 * Readers and writers queue in one directory, as Curator's recipe does: {@code <name>/_c_<uuid>-__READ__<seq>}
 * and {@code <name>/_c_<uuid>-__WRIT__<seq>}, in sequence order. A reader is admitted when no writer's node is
 * ahead of its own (it waits on the first writer ahead); a writer when no node at all is (it waits on its
 * predecessor). So Curator's readers and writers and disco's exclude each other and keep one queue order.
 *
 * <h2>Tokens</h2>
 * The phase marker {@code /disco-rwlock-phase<name>} is a persistent node outside the lock's directory (where
 * Curator's drivers would queue it): no holder's node, not listed. After admission, one more ZooKeeper write,
 * guarded by the own node still existing:
 * <ul>
 *   <li>a writer sets its own node's data and deletes the marker, in one transaction; its token W is the zxid
 *       of that transaction (the own node's new mzxid);</li>
 *   <li>a reader creates the marker if it is absent, in a transaction with a check of its own node; its token
 *       is the marker's czxid P (the one created now, or the one an earlier reader of the phase created).</li>
 * </ul>
 * The order follows as for etcd's read/write lock: a writer is admitted only once every node created before
 * its own is deleted, so every earlier reader's marker write and every earlier writer's transaction has a lower
 * zxid than W; while the writer's node exists no reader behind it is admitted and none ahead of it is left, so
 * the marker it deleted is recreated only after its node is gone, above W; and only writers delete the marker,
 * so the readers between two writers share one P, W(previous) &lt; P &lt; W(next). A plain Curator writer does
 * not touch the marker: it carries no token, and disco readers on both sides of it share one.
 *
 * <h2>This class</h2>
 * The read/write lock's hooks ({@link QueueProtocol}: the queue, the admission, the phase's transactions), its
 * calls and whether a writer queued behind a read grant ({@link QueuedWriters}); it makes itself on a session
 * ({@link #create}), and the grant's lifecycle is {@link ZkQueueService}'s. The marker's name is
 * {@link ZooKeeperNodes}'s.
 */
final class ZkRWLockService extends ZkQueueService<RWGrant, RWLockLostException> implements RWLockService {

    private static final List<NodeKind> QUEUE = List.of(NodeKind.READ, NodeKind.WRITE);

    private final String marker;

    private ZkRWLockService(SessionCore core, String name) {
        super(core, name, Primitive.RWLOCK, "read/write lock");
        this.marker = ZooKeeperNodes.phaseMarker(name);
    }

    /**
     * Makes the read/write lock on {@code name} and registers it on its session.
     *
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if the session has a service on {@code name}, or is closed or lost
     */
    static ZkRWLockService create(SessionCore core, String name) {
        String checked = ZooKeeperNodes.checkName(name);
        return core.register(checked, false, () -> new ZkRWLockService(core, checked));
    }

    /** The writers queued behind the latest read grant, or null before the first asks. */
    private volatile QueuedWriters queuedWriters;

    /**
     * True once a writer's node follows the held read grant's own node (see {@link QueuedWriters}); the watch
     * starts with the first question about a read grant.
     */
    @Override
    public boolean writerWaiting() {
        String node = heldNode();
        if (node == null || held().filter(g -> g.mode() == RWGrant.Mode.READ).isEmpty()) {
            return false;
        }
        QueuedWriters q = queuedWriters;
        if (q == null || !node.endsWith("/" + q.readerNode)) {
            if (q != null) {
                q.close();
            }
            queuedWriters = q = new QueuedWriters(core.client(), name, node);
        }
        return q.queued();
    }

    @Override
    List<NodeKind> queueKinds() {
        return QUEUE;
    }

    @Override
    String blocker(List<String> queue, int own, NodeKind kind) {
        if (kind == NodeKind.WRITE) {
            return own == 0 ? null : queue.get(own - 1);
        }
        for (int i = 0; i < own; i++) {
            if (NodeKind.WRITE.names(queue.get(i))) {
                return queue.get(i);
            }
        }
        return null;
    }

    @Override
    RWGrant grant(String node, NodeKind kind, Stat own) throws Exception {
        return grant(node, kind, own, new byte[0]);
    }

    @Override
    RWGrant grant(String node, NodeKind kind, Stat own, byte[] data) throws Exception {
        CuratorFramework c = core.client();
        return kind == NodeKind.WRITE
                ? new RWGrant(node, RWGrant.Mode.WRITE, FencingToken.of(endPhase(c, node, data)))
                : new RWGrant(node, RWGrant.Mode.READ, FencingToken.of(joinPhase(c, node)));
    }

    /**
     * The writer's transaction: its own node's data set again to what it was created with (its claim's metadata;
     * the token is the transaction's zxid, the node's new mzxid, which the listing of claimants reads) and the
     * marker deleted.
     */
    private long endPhase(CuratorFramework c, String node, byte[] data) throws Exception {
        while (true) {
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(c.transactionOp().setData().forPath(node, data));
            boolean markerThere = c.checkExists().forPath(marker) != null;
            if (markerThere) {
                ops.add(c.transactionOp().delete().forPath(marker));
            }
            try {
                for (CuratorTransactionResult r : c.transaction().forOperations(ops)) {
                    if (r.getType() == OperationType.SET_DATA) {
                        return r.getResultStat().getMzxid();
                    }
                }
                throw new IllegalStateException("ZooKeeper's transaction answered without the set-data result");
            } catch (KeeperException.NoNodeException e) {
                if (c.checkExists().forPath(node) == null) {
                    throw e; // the own node is gone: the loss
                }
                // the marker went between the check and the transaction (a Curator-only writer cannot delete
                // it; an operator may): try again without it
            }
        }
    }

    /** The reader's transaction: the marker created if absent, guarded by the own node; the token is its czxid. */
    private long joinPhase(CuratorFramework c, String node) throws Exception {
        while (true) {
            Stat m = c.checkExists().forPath(marker);
            if (m != null) {
                if (c.checkExists().forPath(node) == null) {
                    throw new KeeperException.NoNodeException(node);
                }
                return m.getCzxid();
            }
            try {
                c.createContainers(ZooKeeperNodes.phaseMarkerDir(name));
                List<CuratorOp> ops = List.of(
                        c.transactionOp().check().forPath(node),
                        c.transactionOp()
                                .create()
                                .withMode(CreateMode.PERSISTENT)
                                .forPath(marker, new byte[0]));
                c.transaction().forOperations(ops);
            } catch (KeeperException.NodeExistsException e) {
                // another reader of the phase created it: read it
            }
        }
    }

    @Override
    RWLockLostException lostException(String message, Throwable cause) {
        return new RWLockLostException(message, cause);
    }

    @Override
    public RWGrant rLock() throws InterruptedException {
        try {
            return acquire(NodeKind.READ, null, "rwlock.rLock()", core.claimData());
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public RWGrant rLock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(NodeKind.READ, requireTimeout(timeout), "rwlock.rLock()", core.claimData());
    }

    @Override
    public Optional<RWGrant> tryRLock() {
        return tryAcquire(NodeKind.READ, "rwlock.tryRLock()");
    }

    @Override
    public CompletableFuture<RWGrant> rLockAsync() {
        return acquireAsync(NodeKind.READ, core.claimData());
    }

    @Override
    public void rUnlock() {
        release(NodeKind.READ, "rwlock.rUnlock()");
    }

    @Override
    public RWGrant lock() throws InterruptedException {
        try {
            return acquire(NodeKind.WRITE, null, "rwlock.lock()", core.claimData());
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public RWGrant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(NodeKind.WRITE, requireTimeout(timeout), "rwlock.lock()", core.claimData());
    }

    @Override
    public Optional<RWGrant> tryLock() {
        return tryAcquire(NodeKind.WRITE, "rwlock.tryLock()");
    }

    @Override
    public CompletableFuture<RWGrant> lockAsync() {
        return acquireAsync(NodeKind.WRITE, core.claimData());
    }

    @Override
    public void unlock() {
        release(NodeKind.WRITE, "rwlock.unlock()");
    }

    @Override
    public CompletableFuture<Void> rUnlockAsync() {
        return releaseAsync(NodeKind.READ, "rwlock.rUnlock()");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync(NodeKind.WRITE, "rwlock.unlock()");
    }
}

package io.disco.provider.zookeeper;

import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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

/**
 * A semaphore with fenced slots on ZooKeeper.
 *
 * <h2>Nodes</h2>
 * Holders queue as {@code <name>/leases/_c_<uuid>-lease-<seq>} (the directory and node name of Curator's
 * {@code InterProcessSemaphoreV2}); a holder is admitted once fewer than {@code limit} lease nodes are ahead of
 * its own, and a blocked one waits for any change of the directory. The limit is recorded once per name in the
 * persistent node {@code <name>/limit} (created by the first service, compared by every later one).
 *
 * <h2>With Curator's recipe on the same name</h2>
 * {@code InterProcessSemaphoreV2} takes its internal mutex {@code <name>/locks}, creates its lease node and, still
 * holding the mutex, waits until the directory has at most {@code maxLeases} children. Both rules admit a node
 * only when at most {@code limit} nodes are at or before it (Curator counts the nodes behind it too), and a
 * holder's node exists from before its admission until its release; so the holders, all at or before the newest
 * holder when it was admitted, are never more than the limit, whichever mix (SemaphoreInteropTest). Disco does
 * not take the mutex: taking it only to create its node changes neither rule, and holding it through the wait, as
 * Curator does, would line every disco waiter up behind one ZooKeeper lock. What mixing costs is order: a Curator
 * waiter counts the disco waiters behind it, so a disco claimant behind it may be admitted first while it waits.
 *
 * <h2>Slots and tokens</h2>
 * After admission a holder claims slot {@code i} in {@code 0 .. limit-1}: the persistent node
 * {@code <name>/slots/<i>} is free when its data is empty or names a lease node that is gone (a crash, an
 * operator); the claim sets the data to the own lease node's name, in a transaction guarded by the slot's
 * version (every claim and release bumps it, so two claimers that read the same free slot cannot both win) and
 * a check of the own lease node. The token is the slot's new mzxid: it grows with every claim of the slot, and
 * a slot is claimed again only once its holder's lease node is gone, so a valid holder is never overtaken on its
 * slot. A release empties the slot in the transaction that deletes the lease node (which fails if the lease
 * node is gone, so a release never frees a slot that somebody else claimed meanwhile).
 *
 * <h2>This class</h2>
 * The semaphore's hooks ({@link QueueProtocol}: the queue, the admission, the slot's claim and release), its calls
 * and its limit's record; it makes itself on a session ({@link #create}), and the grant's lifecycle is
 * {@link ZkQueueService}'s. The paths are {@link ZooKeeperNodes}'s.
 */
final class ZkSemaphoreService extends ZkQueueService<Permit, SemaphoreLostException> implements SemaphoreService {

    private static final List<NodeKind> QUEUE = List.of(NodeKind.LEASE);

    private final int limit;
    private final String leases;

    private ZkSemaphoreService(SessionCore core, String name, int limit) {
        super(core, name, Primitive.SEMAPHORE, "semaphore");
        this.limit = limit;
        this.leases = ZooKeeperNodes.semaphoreLeases(name);
    }

    /**
     * Makes the semaphore of {@code limit} on {@code name} and registers it on its session, once its limit is
     * recorded, or found equal to the recorded one.
     *
     * @throws IllegalArgumentException if {@code name} is blank or invalid, {@code limit < 1}, or the semaphore
     *                                  exists with another limit
     * @throws IllegalStateException if the session has a service on {@code name} other than a semaphore, or is closed
     *     or lost
     * @throws DiscoException if ZooKeeper failed while the limit was checked
     */
    static ZkSemaphoreService create(SessionCore core, String name, int limit) {
        String checked = ZooKeeperNodes.checkName(name);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        core.checkFree(checked, true);
        checkLimit(core.client(), checked, limit);
        return core.register(checked, true, () -> new ZkSemaphoreService(core, checked, limit));
    }

    /**
     * Records the limit of {@code name}, or checks it against the recorded one. Not interruptible: a thread
     * interrupted on entry still gets the answer (a create sent and then given up on could leave a record behind,
     * unseen), and keeps its status for the acquisition that follows to act on.
     */
    static void checkLimit(CuratorFramework c, String name, int limit) {
        boolean interrupted = Thread.interrupted();
        try {
            recordLimit(c, name, limit);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void recordLimit(CuratorFramework c, String name, int limit) {
        String node = ZooKeeperNodes.semaphoreLimit(name);
        byte[] want = Integer.toString(limit).getBytes(StandardCharsets.UTF_8);
        try {
            try {
                c.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.PERSISTENT)
                        .forPath(node, want);
                return;
            } catch (KeeperException.NodeExistsException e) {
                // recorded already: compare
            }
            String recorded = new String(c.getData().forPath(node), StandardCharsets.UTF_8);
            if (!recorded.equals(Integer.toString(limit))) {
                throw new IllegalArgumentException("the semaphore " + name + " exists with limit " + recorded
                        + "; this service asked for limit " + limit);
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new DiscoException("ZooKeeper failed while reading the limit of the semaphore " + name + ": " + e, e);
        }
    }

    @Override
    String queueDir() {
        return leases;
    }

    @Override
    boolean waitsOnDirectory() {
        return true;
    }

    @Override
    List<NodeKind> queueKinds() {
        return QUEUE;
    }

    @Override
    String blocker(List<String> queue, int own, NodeKind kind) {
        return own < limit ? null : queue.get(own - limit);
    }

    /** Frees the slot (its data emptied) in the transaction that deletes the holder's node. */
    @Override
    List<CuratorOp> releaseOps(Permit held) {
        try {
            return List.of(core.client()
                    .transactionOp()
                    .setData()
                    .forPath(ZooKeeperNodes.semaphoreSlot(name, held.slot()), new byte[0]));
        } catch (Exception e) {
            throw new DiscoException("could not prepare the release of " + held + ": " + e, e);
        }
    }

    /**
     * Claims a free slot: one whose data is empty or names a holder node that is gone, by setting its data to
     * the own node's name, guarded by the slot's version and the own node; the token is the slot's new mzxid.
     */
    @Override
    Permit grant(String node, NodeKind kind, org.apache.zookeeper.data.Stat own) throws Exception {
        CuratorFramework c = core.client();
        byte[] me = node.getBytes(StandardCharsets.UTF_8);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < limit; i++) {
                String slot = ZooKeeperNodes.semaphoreSlot(name, i);
                org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
                byte[] holder;
                try {
                    holder = c.getData().storingStatIn(st).forPath(slot);
                } catch (KeeperException.NoNodeException e) {
                    try {
                        c.create()
                                .creatingParentContainersIfNeeded()
                                .withMode(CreateMode.PERSISTENT)
                                .forPath(slot, new byte[0]);
                    } catch (KeeperException.NodeExistsException raced) {
                        // created by another holder meanwhile
                    }
                    holder = c.getData().storingStatIn(st).forPath(slot);
                }
                if (holder.length > 0 && c.checkExists().forPath(new String(holder, StandardCharsets.UTF_8)) != null) {
                    continue; // a live holder's slot
                }
                List<CuratorTransactionResult> results;
                try {
                    results = c.transaction()
                            .forOperations(List.of(
                                    c.transactionOp().check().forPath(node),
                                    c.transactionOp()
                                            .setData()
                                            .withVersion(st.getVersion())
                                            .forPath(slot, me)));
                } catch (KeeperException.BadVersionException e) {
                    continue; // claimed by another holder first
                }
                for (CuratorTransactionResult r : results) {
                    if (r.getType() == OperationType.SET_DATA) {
                        return new Permit(
                                name, node, i, FencingToken.of(r.getResultStat().getMzxid()));
                    }
                }
                throw new IllegalStateException("ZooKeeper's transaction answered without the set-data result");
            }
        }
        throw new DiscoException("no free slot of the semaphore " + name + " after 20 rounds, although admitted");
    }

    @Override
    SemaphoreLostException lostException(String message, Throwable cause) {
        return new SemaphoreLostException(message, cause);
    }

    @Override
    public Permit acquire() throws InterruptedException {
        try {
            return acquire(NodeKind.LEASE, null, "semaphore.acquire()", core.claimData());
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Permit acquire(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(NodeKind.LEASE, requireTimeout(timeout), "semaphore.acquire()", core.claimData());
    }

    @Override
    public Optional<Permit> tryAcquire() {
        return tryAcquire(NodeKind.LEASE, "semaphore.tryAcquire()");
    }

    @Override
    public CompletableFuture<Permit> acquireAsync() {
        return acquireAsync(NodeKind.LEASE, core.claimData());
    }

    @Override
    public void release() {
        release(NodeKind.LEASE, "semaphore.release()");
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        return releaseAsync(NodeKind.LEASE, "semaphore.release()");
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public Stat stat() {
        SessionThread.refuseOnSessionThread("semaphore.stat()");
        try {
            int registered = NodeKind.queue(core.client().getChildren().forPath(leases), QUEUE)
                    .size();
            return new Stat(limit, registered);
        } catch (KeeperException.NoNodeException e) {
            return new Stat(limit, 0);
        } catch (Exception e) {
            throw core.failure("counting the semaphore " + name, e);
        }
    }
}

package io.disco.provider.zookeeper;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The worker of one {@link QueueAttempt}: once the service's last release is confirmed ({@link QueueRelease}),
 * creates the own node ({@link OwnNode}, with its ownership check), waits for the node the service names as its
 * blocker to go (its predecessor, or any change of the directory for a semaphore), parks while the session is
 * SUSPENDED, then has the service make the grant and commit it; every other way out withdraws the node
 * ({@link QueueNodes}) before the attempt's {@code withdrawn} completes. It knows its service only as an
 * {@link AttemptOwner}.
 *
 * @param <G> the grant
 */
final class QueueWorker<G extends Fenced> implements Runnable {

    private final AttemptOwner<G> service;
    private final QueueAttempt<G> a;

    QueueWorker(AttemptOwner<G> service, QueueAttempt<G> attempt) {
        this.service = service;
        this.a = attempt;
    }

    @Override
    public void run() {
        SessionCore core = service.core();
        CuratorFramework c = core.client();
        String node = null;
        boolean committed = false;
        try {
            if (a.future.isDone() || !awaitReleaseConfirmed()) {
                return; // no node before the service's last release is confirmed: it may still be there (issue 44)
            }
            Stat created = new Stat();
            node = OwnNode.create(c, service.queueDir(), a.kind, a.data, created);
            a.node = node;
            Stat own = OwnNode.confirm(c, node, created);
            if (own == null) {
                service.lose("its node " + node + " was deleted before it could wait", null);
                return;
            }
            String foreign = OwnNode.foreignOwner(node, own, core.sessionId());
            if (foreign != null) {
                a.future.completeExceptionally(service.lost(foreign, null));
                return;
            }
            committed = awaitTurn(c, node, own);
        } catch (InterruptedException e) {
            a.future.completeExceptionally(new DiscoException(
                    "the worker of the " + service.what() + " on " + service.name + " was interrupted", e));
        } catch (KeeperException.SessionExpiredException e) {
            DiscoException sessionLoss = core.lossOrNull();
            a.future.completeExceptionally(
                    service.lost(sessionLoss == null ? "the session expired" : sessionLoss.getMessage(), e));
        } catch (Exception e) {
            a.future.completeExceptionally(service.zkFailure("acquiring", e));
        } finally {
            if (!committed && node != null) {
                QueueNodes.withdraw(c, node);
            }
            a.withdrawn.complete(null);
        }
    }

    /**
     * Waits until no release of the service is unconfirmed: only then may the attempt create its node (issue 44).
     *
     * @return false if the attempt ended meanwhile (given up, the service lost or closed)
     */
    private boolean awaitReleaseConfirmed() throws InterruptedException {
        while (true) {
            if (!service.releaseUnconfirmed()) {
                return !a.future.isDone();
            }
            if (a.future.isDone()) {
                return false;
            }
            a.wake.acquire(); // released when the release is confirmed, and when the attempt ends
        }
    }

    /**
     * Waits until the own node is admitted, then grants and commits.
     *
     * @return whether the grant was committed (the node is then the held one)
     */
    private boolean awaitTurn(CuratorFramework c, String node, Stat own) throws Exception {
        boolean watchingOwn = false;
        String ownName = NodeKind.name(node);
        String dir = service.queueDir();
        while (!a.future.isDone()) {
            List<String> children = service.waitsOnDirectory()
                    ? c.getChildren().usingWatcher(a.watcher).forPath(dir)
                    : c.getChildren().forPath(dir);
            List<String> queue = NodeKind.queue(children, service.queueKinds());
            int i = queue.indexOf(ownName);
            if (i < 0) {
                service.lose("its node " + node + " was deleted by somebody else while it waited", null);
                return false;
            }
            String blocker = service.blocker(queue, i, a.kind);
            if (blocker == null) {
                blocker = service.nestedBlocker(children, a.kind, own.getCzxid());
            }
            if (blocker == null) {
                if (service.core().parkIfSuspended(a.wake)) {
                    a.wake.acquire(); // no new grant while SUSPENDED: wait for the session to come back or go
                    continue;
                }
                return grantAndCommit(c, node, own);
            }
            if (a.tryOnly) {
                a.future.complete(null);
                return false;
            }
            if (!watchingOwn) { // from now on, a deletion of the own node wakes the wait
                if (c.checkExists().usingWatcher(a.watcher).forPath(node) == null) {
                    service.lose("its node " + node + " was deleted by somebody else while it waited", null);
                    return false;
                }
                watchingOwn = true;
            }
            Stat predecessor = service.waitsOnDirectory()
                    ? own
                    : c.checkExists().usingWatcher(a.watcher).forPath(ZKPaths.makePath(dir, blocker));
            if (predecessor != null) {
                a.wake.acquire(); // the predecessor's deletion, the own node's, a give-up or the session's end
            }
        }
        return false;
    }

    private boolean grantAndCommit(CuratorFramework c, String node, Stat own) throws Exception {
        G grant;
        try {
            grant = service.grant(node, a.kind, own, a.data);
        } catch (KeeperException.NoNodeException e) {
            service.lose("its node " + node + " was deleted by somebody else as it was admitted", e);
            return false;
        }
        boolean committed = service.commit(a, grant); // and watches the held node
        if (!committed) {
            try { // given up at the instant of the grant: what the grant took goes too
                QueueNodes.deleteHeld(c, node, service.releaseOps(grant));
            } catch (Exception e) {
                // the node is withdrawn by the caller; a slot left behind is free once the node is gone
            }
        }
        return committed;
    }
}

package io.disco.chaos;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.IssuedBound;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The issued bound of ZooKeeper tokens (czxids) for the chaos resource's guard: the zxid of a write made now
 * (a {@code setData} of a node of its own, whose {@code mzxid} the answer carries). Every token issued before
 * the call is the czxid of a node created by an earlier transaction, so it is below that zxid; a token above it
 * was issued by nobody.
 */
final class ZkIssuedBound implements IssuedBound {

    private static final String NODE = "/disco-chaos-issued-bound";

    private final CuratorFramework client;

    ZkIssuedBound(CuratorFramework client) {
        this.client = client;
    }

    @Override
    public CompletionStage<FencingToken> current() {
        CompletableFuture<FencingToken> bound = new CompletableFuture<>();
        try {
            client.setData().inBackground((c, event) -> {
                if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                    bound.complete(FencingToken.of(event.getStat().getMzxid()));
                } else if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    create(bound);
                } else {
                    bound.completeExceptionally(KeeperException.create(KeeperException.Code.get(event.getResultCode()), NODE));
                }
            }).forPath(NODE, new byte[0]);
        } catch (Exception e) {
            bound.completeExceptionally(e);
        }
        return bound;
    }

    /** The first call: the node's creation is the write; its czxid is the bound. */
    private void create(CompletableFuture<FencingToken> bound) {
        try {
            Stat stat = new Stat();
            client.create().orSetData().storingStatIn(stat).withMode(CreateMode.PERSISTENT).forPath(NODE, new byte[0]);
            bound.complete(FencingToken.of(stat.getMzxid()));
        } catch (Exception e) {
            bound.completeExceptionally(e);
        }
    }
}

package io.disco.provider.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.grpc.Context;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One renewal request of a session's lease: a single {@code LeaseKeepAlive} call with a deadline of its own
 * (renewals are scheduled by the session, see {@link LeaseKeeper}, never a stream that jetcd keeps). Used by
 * the renewals that keep the lease alive and by those that make it valid enough to be handed out
 * ({@link HandOutRenewal}).
 */
final class KeepAlive {

    private final Client client;
    private final long leaseId;
    /** The lease timer, where a renewal's deadline fires. */
    private final ScheduledExecutorService leaseTimer;

    KeepAlive(Client client, long leaseId, ScheduledExecutorService leaseTimer) {
        this.client = client;
        this.leaseId = leaseId;
        this.leaseTimer = leaseTimer;
    }

    /**
     * jetcd's {@code keepAliveOnce} opens a stream per call and ends it only when an answer comes, so
     * every renewal sent to a member that stopped answering would leave one open stream behind. The
     * stream is opened in a gRPC context that is cancelled at the timeout (and after the answer):
     * gRPC then cancels the call.
     */
    CompletableFuture<LeaseKeepAliveResponse> once(long timeoutNanos) {
        Context.CancellableContext scope =
                Context.current().withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS, leaseTimer);
        CompletableFuture<LeaseKeepAliveResponse> answer;
        Context previous = scope.attach();
        try {
            answer = client.getLeaseClient().keepAliveOnce(leaseId);
        } catch (RuntimeException e) {
            scope.cancel(e);
            throw e;
        } finally {
            scope.detach(previous);
        }
        answer.whenComplete((r, e) -> scope.cancel(null));
        return answer;
    }
}

package io.disco.election;

import io.disco.fencing.DiscoService;
import io.disco.fencing.Held;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Leader election with fencing tokens: candidates queue up, the oldest candidate still present is the
 * leader, and every leadership term carries a token strictly greater than every earlier term's.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>At most one candidate is leader at a time, as long as every candidate's lease is alive. A
 *       candidate's key is recognised as leader only once every key created before it is gone.</li>
 *   <li>{@link #campaign(String)} returns <em>this</em> candidate's {@link Leadership}; its
 *       {@linkplain Leadership#token() token} (for etcd: the CreateRevision of the winning key) is the
 *       one to attach to every request sent to a guarded resource. Never take the token from a later
 *       {@link #leader()} call: by then the leadership may have moved on, and the token would be
 *       another leader's.</li>
 *   <li>{@link #proclaim(String)} changes the leader's value; the term, and so the token, stay the
 *       same.</li>
 *   <li>One service is one candidate. {@link #campaign(String)} while this service already leads
 *       returns the held leadership (proclaiming the new value if it differs). Starting a second
 *       campaign while one of this service is still waiting fails with {@link IllegalStateException}:
 *       use one service (and, for etcd, one session) per candidate.</li>
 *   <li>Leadership lives as long as the service's lease. When the lease is lost (expired after a pause
 *       or partition, revoked, or the backend unreachable for longer than its TTL), {@link #done()}
 *       completes and {@link #err()} holds a {@link LeadershipLostException}; a pending campaign fails
 *       with that exception and every later campaign fails at once. A service whose lease is lost is
 *       finished: create a new one.</li>
 *   <li>Every way of giving up a campaign (timeout, interruption, cancellation, failure) withdraws this
 *       candidate's key from the backend, so it never blocks anybody.
 *       When the backend refuses the withdrawal for a reason retrying cannot cure (a permission
 *       taken away), the claim blocks others for at most one lease TTL: the lease that carries it is
 *       given up (the etcd provider stops renewing it, so it expires on the server), which is reported
 *       at once as the loss of this service and of every other service on the same lease.</li>
 *   <li>{@link #leader()} and {@link #observe(Consumer)} work for anyone, candidate or not: a process
 *       may use a service only to watch the election.</li>
 *   <li>Backend failures surface as {@link io.disco.fencing.DiscoException} with the backend's exception
 *       as cause; a backend that does not answer in time gives a timely exception, never a hang.</li>
 *   <li>Threads: every future this service hands out ({@link #campaignAsync}, {@link #done()})
 *       completes on the implementation's callback executor, never on a thread that keeps the lease
 *       alive or detects its loss (the etcd provider: {@code EtcdOptions.Builder.callbackExecutor},
 *       by default a pool of daemon threads). Dependent actions may block, or call back into this or
 *       another service, without delaying renewal or {@code done()}.</li>
 *   <li>A closed service never hands out a leadership: {@link #close()} fails a pending campaign with
 *       {@link IllegalStateException} and leaves nothing of this candidate in the backend.</li>
 *   <li>A term is its key's incarnation (for etcd: its CreateRevision). When {@link #resign()}
 *       returns, nothing of the resigned term is held, even if a proclamation of it was still in
 *       flight; a proclamation returns the token of the term it was applied to, or fails with
 *       {@link NotLeaderException} when that term has ended.</li>
 *   <li>Implementations are thread-safe, and never use an object handed to the caller (this service,
 *       its session) as an internal lock.</li>
 * </ul>
 *
 * <h2>Who closes what</h2>
 * {@link #close()} resigns if leading, withdraws a pending campaign and stops every observation of the
 * service. A service created with its own session also revokes that session's lease; a service created
 * on a shared session leaves the session open. Nothing in this library closes the backend client the
 * caller passed in.
 */
public interface ElectionService extends DiscoService<Leadership, LeadershipLostException> {

    /**
     * Campaigns with {@code value} and waits, as long as it takes, until this candidate is the leader.
     *
     * @param value the value to lead with (for example this node's address), not null
     * @return this candidate's leadership; its token is the fencing token of this term
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         candidacy is withdrawn)
     * @throws LeadershipLostException if the lease was lost before or while waiting
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalStateException if another campaign of this service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Leadership campaign(String value) throws InterruptedException;

    /**
     * Campaigns with {@code value} and waits at most {@code timeout} to become the leader: zero or less leads only
     * if nobody else does or waits ahead now (one try, and the candidacy is withdrawn if it does not win at once),
     * and a timeout too long to count in nanoseconds waits without a limit (the rule of
     * {@link io.disco.fencing.Timeouts}).
     *
     * @param value the value to lead with, not null
     * @param timeout the longest time to wait; zero or less: only if this candidate leads at once
     * @return this candidate's leadership
     * @throws NullPointerException if {@code value} or {@code timeout} is null (the method without a timeout waits
     *         without a limit)
     * @throws TimeoutException if another candidate still led when the timeout expired; the candidacy is withdrawn
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         candidacy is withdrawn)
     * @throws LeadershipLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if another campaign of this service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed, or did not answer at all within the timeout
     */
    Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Starts campaigning without blocking the caller.
     *
     * <p>The future completes with this candidate's leadership, or exceptionally with the exceptions
     * {@link #campaign(String)} names. {@code cancel(true|false)} (or {@code completeExceptionally})
     * withdraws the candidacy from the backend and returns true, unless the leadership was already
     * committed: it then returns false and the future completes with it. Never neither. The future completes on the callback
     * executor (see the class comment).
     *
     * @param value the value to lead with, not null
     * @return the pending campaign
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalStateException if another campaign of this service is in progress, or the service is closed
     */
    CompletableFuture<Leadership> campaignAsync(String value);

    /**
     * Changes the value of this leader's term without giving up leadership. The token is unchanged.
     *
     * @param value the new value, not null
     * @return the held leadership with the new value
     * @throws NotLeaderException if this service is not the leader (never won, resigned, or its key is gone)
     * @throws NullPointerException if {@code value} is null
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Leadership proclaim(String value);

    /**
     * Gives up leadership, so that the next candidate in line becomes leader; does nothing if this
     * service is not the leader (a pending campaign is withdrawn by cancelling its future instead). If
     * the backend cannot be reached the exception is thrown and the service still considers itself
     * the leader, so the call can be retried (the lease expiry ends the term in any case).
     *
     * <p>If the grant was lost before this call (its lease expired or was revoked, or its key was
     * deleted by anybody else) the loss is thrown, so that an owner that was paused learns that it
     * had lost.
     *
     * @throws LeadershipLostException if the term was lost before this call ended it
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    void resign();

    /**
     * The current leader of the election as the backend sees it now, whoever it is.
     *
     * <p>For information only: the answer may be outdated as soon as it returns. A leader attaches the
     * token {@link #campaign(String)} returned, never one read here.
     *
     * @return the current leader, or empty if there is no candidate
     * @throws IllegalStateException if the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Optional<Leadership> leader();

    /**
     * This service's own leadership, if it is the leader and its lease has not been lost.
     *
     * @return the held leadership, or empty
     */
    Optional<Leadership> held();

    /**
     * Watches the election and calls {@code listener} with every leadership change: a new leader, or
     * a new value proclaimed by the current one.
     *
     * <p>Deliveries happen in order on one thread dedicated to the observation, never concurrently, so
     * the listener may block (later changes queue up behind it). The first delivery is the leader at
     * the time of the call, if there is one. Nothing is delivered while there is no leader. When the
     * backend's history has been compacted or the watch breaks, the observation re-reads the current
     * leader and carries on: intermediate terms may then be skipped, but the last delivery is always
     * the latest leadership. An exception thrown by the listener is logged and does not end the
     * observation.
     *
     * <p>The observation runs until it is closed or the service is closed; it does not depend on this
     * service's lease, and it does not need this service to campaign.
     *
     * @param listener called with each new leadership, not null
     * @return the running observation; close it to stop
     * @throws NullPointerException if {@code listener} is null
     * @throws IllegalStateException if the service is closed
     */
    Observation observe(Consumer<Leadership> listener);

    /**
     * Completes, once, when this service's lease is lost or the service is closed. It is a property
     * of the service's lifetime, not of any single term. It always completes normally; ask
     * {@link #err()} whether the reason was a loss.
     *
     * @return a stage that completes when the service is finished
     */
    CompletionStage<Void> done();

    /**
     * The reason the lease was lost, once {@link #done()} completed because of a loss.
     *
     * @return the loss, or empty while the service is healthy or after a plain {@link #close()}
     */
    Optional<LeadershipLostException> err();

    /**
     * Like {@link #resign()}, without blocking the caller; completes on the callback executor,
     * exceptionally with the exceptions {@link #resign()} names. Cancelling it does not stop the
     * resignation.
     *
     * @return the pending resignation
     */
    CompletableFuture<Void> resignAsync();

    /**
     * Like {@link #proclaim(String)}, without blocking the caller; completes on the callback executor.
     *
     * @param value the new value, not null
     * @return the pending proclamation: the leadership with the new value
     */
    CompletableFuture<Leadership> proclaimAsync(String value);

    /**
     * Campaigns and, once leading, holds the term for one scope: closing the returned hold resigns
     * (the service stays open).
     *
     * @param value the value to lead with, not null
     * @param timeout the longest time to wait; zero or less: only if this candidate leads at once
     * @return the held leadership
     * @throws TimeoutException if another candidate still led when the timeout expired; the candidacy is withdrawn
     * @throws InterruptedException if interrupted while waiting; the candidacy is withdrawn
     */
    default Held<Leadership> hold(String value, Duration timeout) throws InterruptedException, TimeoutException {
        return Held.of(campaign(value, timeout), this::resign);
    }

    /**
     * Like {@link #close()}, without blocking the caller: the future completes, off the session's
     * threads (on the callback executor), once the close has finished.
     *
     * @return the pending close
     */
    CompletableFuture<Void> closeAsync();

    /**
     * Resigns if leading, withdraws a pending campaign, stops every observation and completes
     * {@link #done()}. Revokes the lease if the service owns its session. Idempotent.
     */
    @Override
    void close();
}

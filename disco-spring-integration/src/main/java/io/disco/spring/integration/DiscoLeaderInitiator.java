package io.disco.spring.integration;

import io.disco.client.Disco;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.LeaderEventPublisher;

/**
 * Spring Integration's leader initiator over a disco leadership runner: in place of
 * {@code LockRegistryLeaderInitiator} (one bean), it tells a {@link Candidate} and the application (through
 * {@code OnGrantedEvent}/{@code OnRevokedEvent}, which drive the role controller's endpoints) when this instance
 * leads, with the term's fencing token in the {@link DiscoLeaderContext}.
 *
 * <pre>{@code
 * @Bean
 * DiscoLeaderInitiator leaderInitiator(Disco disco) {
 *     return new DiscoLeaderInitiator(disco, "/elections/orders", "orders"); // the role "orders"
 * }
 *
 * @EventListener
 * void granted(OnGrantedEvent event) {
 *     FencingToken token = ((DiscoLeaderContext) event.getContext()).token();
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>Terms.</b> When started, it campaigns in the election; each term won calls the candidate's
 *       {@code onGranted} and publishes {@code OnGrantedEvent}, on a thread of the runner's own for the term
 *       (never one that keeps the lease alive); the term's end (lease lost or revoked, {@link Context#yield()},
 *       stop) calls {@code onRevoked} and publishes {@code OnRevokedEvent} on the same thread, and then the
 *       runner campaigns again (after a lost lease, on the client's new one).</li>
 *   <li><b>No heartbeat.</b> Unlike {@code LockRegistryLeaderInitiator}, nothing polls: the end of a term is
 *       told no later than the lease's loss is detected, and a revoked lease is told at once.</li>
 *   <li><b>Who closes what.</b> {@link #stop()} ends the current term and closes the runner (waiting at most
 *       10 s for {@code onGranted} to return); it never closes the {@link Disco} client.</li>
 * </ul>
 */
public final class DiscoLeaderInitiator implements SmartLifecycle, ApplicationEventPublisherAware {

    private static final Logger log = LoggerFactory.getLogger(DiscoLeaderInitiator.class);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private final Disco disco;
    private final String election;
    private final Candidate candidate;
    private LeaderEventPublisher publisher;
    private boolean autoStartup = true;
    private int phase = Integer.MAX_VALUE - 1000; // as LockRegistryLeaderInitiator
    private volatile LeadershipRunner runner;
    private volatile DiscoLeaderContext current;

    /**
     * An initiator for the role {@code role}, with a {@link DefaultCandidate} of a random id.
     *
     * @param disco the client to campaign through; never closed here
     * @param election the election's name, a disco name such as {@code /elections/orders}
     * @param role the role its endpoints are controlled by
     * @throws NullPointerException if an argument is null
     */
    public DiscoLeaderInitiator(Disco disco, String election, String role) {
        this(disco, election, new DefaultCandidate(UUID.randomUUID().toString(), Objects.requireNonNull(role, "role")));
    }

    /**
     * @param disco the client to campaign through; never closed here
     * @param election the election's name, a disco name such as {@code /elections/orders}
     * @param candidate told of the terms; its id is the value it campaigns with, its role the events' role
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code election} is not a disco name ({@link io.disco.client.Names})
     */
    public DiscoLeaderInitiator(Disco disco, String election, Candidate candidate) {
        this.disco = Objects.requireNonNull(disco, "disco");
        this.election = Objects.requireNonNull(election, "election");
        this.candidate = Objects.requireNonNull(candidate, "candidate");
        io.disco.client.Names.check(election, "election");
    }

    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher applicationEventPublisher) {
        Objects.requireNonNull(applicationEventPublisher, "applicationEventPublisher");
        if (publisher == null) {
            publisher = new DefaultLeaderEventPublisher(applicationEventPublisher);
        }
    }

    /**
     * @param publisher publishes the events (default: Spring Integration's, to the application context)
     * @throws NullPointerException if {@code publisher} is null
     */
    public void setLeaderEventPublisher(LeaderEventPublisher publisher) {
        this.publisher = Objects.requireNonNull(publisher, "publisher");
    }

    /** @param autoStartup whether to start with the context (default: true) */
    public void setAutoStartup(boolean autoStartup) {
        this.autoStartup = autoStartup;
    }

    /** @param phase the lifecycle phase (default: {@code Integer.MAX_VALUE - 1000}) */
    public void setPhase(int phase) {
        this.phase = phase;
    }

    /** @return the current term's context, or one whose {@link Context#isLeader()} is false when not leading */
    public Context getContext() {
        DiscoLeaderContext context = current;
        return context != null
                ? context
                : new Context() {
                    @Override
                    public boolean isLeader() {
                        return false;
                    }

                    @Override
                    public String getRole() {
                        return candidate.getRole();
                    }

                    @Override
                    public String toString() {
                        return "DiscoLeaderContext[" + election + ", not leading]";
                    }
                };
    }

    private void lead(LeaderTerm term) throws InterruptedException {
        TermContext context = new TermContext(term);
        boolean granted = false;
        try {
            current = context;
            candidate.onGranted(context);
            granted = true;
            if (publisher != null) {
                publisher.publishOnGranted(this, context, candidate.getRole());
            }
            while (!term.awaitEnd(Duration.ofDays(1))) {
                // the term goes on
            }
        } catch (InterruptedException e) {
            // the end of the term: the runner interrupts its task first
        } finally {
            current = null;
            Thread.interrupted(); // onRevoked and the listeners run without the term's interrupt
            if (granted) {
                try {
                    candidate.onRevoked(context);
                } finally {
                    if (publisher != null) {
                        publisher.publishOnRevoked(this, context, candidate.getRole());
                    }
                }
            }
        }
    }

    @Override
    public synchronized void start() {
        if (runner == null) {
            runner = disco.leadershipRunner(election, LeadershipRunner.Options.of(candidate.getId(), this::lead));
        }
    }

    @Override
    public synchronized void stop() {
        LeadershipRunner r = runner;
        runner = null;
        if (r != null && !r.close(STOP_TIMEOUT)) {
            log.warn(
                    "the candidate of '{}' did not return from onGranted within {} s of stop: it keeps the leadership"
                            + " until it returns",
                    election,
                    STOP_TIMEOUT.toSeconds());
        }
    }

    @Override
    public boolean isRunning() {
        return runner != null;
    }

    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }

    @Override
    public int getPhase() {
        return phase;
    }

    @Override
    public String toString() {
        return "DiscoLeaderInitiator['" + election + "', role " + candidate.getRole() + "]";
    }

    /** One term's context. */
    private final class TermContext implements DiscoLeaderContext {

        private final LeaderTerm term;

        TermContext(LeaderTerm term) {
            this.term = term;
        }

        @Override
        public FencingToken token() {
            return term.token();
        }

        @Override
        public Leadership leadership() {
            return term.leadership();
        }

        @Override
        public boolean isLeader() {
            return term.isActive();
        }

        @Override
        public void yield() {
            LeadershipRunner r = runner;
            if (r != null && term.isActive()) {
                r.relinquish();
            }
        }

        @Override
        public String getRole() {
            return candidate.getRole();
        }

        @Override
        public String toString() {
            return "DiscoLeaderContext[" + election + ", role " + candidate.getRole() + ", " + term + "]";
        }
    }
}

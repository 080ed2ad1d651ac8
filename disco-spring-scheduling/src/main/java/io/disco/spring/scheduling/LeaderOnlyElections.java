package io.disco.spring.scheduling;

import io.disco.client.Disco;
import io.disco.election.LeaderTerm;
import io.disco.election.LeadershipRunner;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.SmartLifecycle;

/**
 * The elections of the context's {@link LeaderOnly} methods: one leadership runner per name on the
 * context's {@link Disco} client, started with the context and closed when it stops. A runner's task holds
 * the term: it publishes the term's {@link TermRuns} for the calls, waits for the end, then interrupts the
 * calls in progress and waits for them to return before giving the term back.
 */
final class LeaderOnlyElections implements SmartLifecycle, BeanFactoryAware {

    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyElections.class);
    /** How long stopping waits for each runner (a leader-only method that ignores its interrupt). */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    /** One election: its runner once started, and the active term's calls. */
    static final class Election {
        final String name;
        volatile LeadershipRunner runner;
        volatile TermRuns current;

        Election(String name) {
            this.name = name;
        }

        void lead(LeaderTerm term) {
            TermRuns runs = new TermRuns(term);
            current = runs;
            try {
                while (!term.awaitEnd(Duration.ofDays(1))) {
                    // the term goes on
                }
            } catch (InterruptedException e) {
                // the end of the term: the runner interrupts its task first
            } finally {
                current = null;
                runs.end();
                runs.awaitIdle();
                Thread.interrupted();
            }
        }
    }

    private final Map<String, Election> elections = new ConcurrentHashMap<>();
    private BeanFactory beanFactory;
    private volatile boolean running;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /** Registers the election {@code name} (started with the context, or at once if it runs). */
    synchronized Election election(String name) {
        Election election = elections.computeIfAbsent(name, Election::new);
        if (running && election.runner == null) {
            start(election);
        }
        return election;
    }

    /** @return the active term's calls of {@code name}, if this instance leads it */
    Optional<TermRuns> leading(String name) {
        Election election = elections.get(name);
        return election == null ? Optional.empty() : Optional.ofNullable(election.current);
    }

    private void start(Election election) {
        Disco disco = beanFactory.getBean(Disco.class);
        String value = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
        election.runner = disco.leadershipRunner(election.name, LeadershipRunner.Options.of(value, election::lead));
    }

    @Override
    public synchronized void start() {
        running = true;
        for (Election election : elections.values()) {
            if (election.runner == null) {
                start(election);
            }
        }
    }

    @Override
    public synchronized void stop() {
        running = false;
        for (Election election : elections.values()) {
            LeadershipRunner runner = election.runner;
            election.runner = null;
            if (runner != null && !runner.close(STOP_TIMEOUT)) {
                log.warn(
                        "the leader-only work of '{}' did not return within {} s of the end of its term: it keeps"
                                + " the leadership until it returns",
                        election.name,
                        STOP_TIMEOUT.toSeconds());
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}

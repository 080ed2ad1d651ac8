package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.election.LeadershipRunner;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * disco's part of a graceful shutdown, in order: every {@link LeadershipRunner} bean steps down (its task
 * is interrupted and its candidacy resigned, waiting at most {@code disco.shutdown.timeout} for each),
 * then the {@link Disco} client releases what it holds and ends its owner (revokes its etcd lease, closes its
 * ZooKeeper session, deletes its Redis session's claims). The backend's client (jetcd's, Curator's, Lettuce's) closes
 * after that, when the context destroys it,
 * if the starter built it. Another instance then takes over at once, instead of after a TTL.
 *
 * <p>Its phase ({@link #PHASE}) is below the web server's graceful shutdown and stop, so requests in
 * flight (which may hold locks) finish first.
 */
public class DiscoLifecycle extends ShutdownStep {

    /** After the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}) and stop ({@code - 2048}). */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private static final Logger LOG = LoggerFactory.getLogger(DiscoLifecycle.class);

    private final Disco disco;
    private final ObjectProvider<LeadershipRunner> runners;
    private final Duration timeout;

    /**
     * @param disco the client to close
     * @param runners the leadership runners to step down first
     * @param timeout the longest wait for each runner
     */
    public DiscoLifecycle(Disco disco, ObjectProvider<LeadershipRunner> runners, Duration timeout) {
        super(PHASE);
        this.disco = disco;
        this.runners = runners;
        this.timeout = timeout;
    }

    @Override
    void shutDown() {
        runners.orderedStream().forEach(runner -> {
            try {
                if (!runner.close(timeout)) {
                    LOG.warn("disco: {} did not step down within {}; its lease ends with its session", runner, timeout);
                }
            } catch (RuntimeException e) {
                LOG.warn("disco: {} failed to step down: {}", runner, e.toString());
            }
        });
        disco.close();
    }
}

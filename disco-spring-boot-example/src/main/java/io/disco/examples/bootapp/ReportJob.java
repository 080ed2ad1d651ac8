package io.disco.examples.bootapp;

import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader-only scheduled job: while this instance leads, every {@code every} it writes the report to the
 * ledger with the term's token. The runner starts it once per term and interrupts it when the term ends
 * (lease lost, relinquished, shutdown); the ledger's guard rejects a write this instance makes after
 * another has led (a pause between deciding and writing).
 */
final class ReportJob implements LeaderTask {

    private static final Logger LOG = LoggerFactory.getLogger(ReportJob.class);

    private final LedgerClient ledger;
    private final Duration every;

    ReportJob(LedgerClient ledger, Duration every) {
        this.ledger = ledger;
        this.every = every;
    }

    @Override
    public void lead(LeaderTerm term) throws InterruptedException {
        LOG.info("leading with token {}: the report job runs every {}", term.token(), every);
        int run = 0;
        while (!term.awaitEnd(every)) {
            run++;
            try {
                LedgerClient.Answer answer = ledger.write("report", term.token(), "report #" + run);
                if (!answer.accepted()) {
                    LOG.warn(
                            "report #{} with token {}: the ledger answered {} {}",
                            run,
                            term.token(),
                            answer.status(),
                            answer.body());
                    return; // a newer leader wrote: this term is over, whatever etcd says yet
                }
            } catch (RuntimeException e) {
                LOG.warn("report #{}: the ledger is unreachable: {}", run, e.toString());
            }
        }
        LOG.info("no longer leading (token {}): {}", term.token(), term.end().orElseThrow());
    }
}

package io.disco.client;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.Observation;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The candidate {@link Disco#election(String)} returns: the election service of the client's owner at
 * the time of the call, which it delegates to, plus the client's bookkeeping: the name is in use (as an
 * election, its {@link ElectionEntry}) from its creation until it is closed or finished, whichever comes first.
 * Its campaigns are the client's observers' acquisitions ({@link AcquisitionObserver.Kind#ELECTION}), started on the
 * calling thread unless the candidate leads already; a term is a hold, until it is resigned, closed or lost.
 */
final class ClientElection implements ElectionService {

    private final ElectionService service;
    private final ElectionEntry entry;
    private final Entries<ElectionEntry> entries;
    private final AtomicBoolean released = new AtomicBoolean();

    private final Observers observers;
    /** The observers' view of the term this candidate leads, or {@link HoldWatch#OFF}. */
    private volatile HoldWatch term = HoldWatch.OFF;

    ClientElection(ElectionService service, ElectionEntry entry, Entries<ElectionEntry> entries, Observers observers) {
        this.service = service;
        this.entry = entry;
        this.entries = entries;
        this.observers = observers;
        service.done().whenComplete((v, e) -> { // lost or closed, on the service's callback executor
            termEnded();
            release(); // the name is free for a new candidate
        });
    }

    /** @return the watch of a campaign: {@link AttemptWatch#OFF} without observers, or while this candidate leads */
    private AttemptWatch watch() {
        return !observers.on() || service.held().isPresent()
                ? AttemptWatch.OFF
                : observers.start(AcquisitionObserver.Kind.ELECTION, entry.name);
    }

    /**
     * A campaign won {@code leadership}: the observers see the term from now on. A term that ended before this
     * (resigned by a dependent of an asynchronous campaign, or lost) ends at once.
     */
    private void won(AttemptWatch watch, Leadership leadership) {
        HoldWatch w = watch.granted(leadership);
        if (!w.isOn()) {
            return;
        }
        term = w;
        if (service.held().filter(l -> l.token().equals(leadership.token())).isEmpty()) {
            w.endedWith(service.err());
        }
    }

    /** The term ended with the service (lost, or closed): a loss if the service reports one. */
    private void termEnded() {
        HoldWatch w = term;
        w.endedWith(service.err());
    }

    /** Once: the client may make another candidate on the name. */
    private void release() {
        if (released.compareAndSet(false, true)) {
            entry.current = null;
            entry.candidate.set(false);
            entries.leave(entry);
        }
    }

    @Override
    public Leadership campaign(String value) throws InterruptedException {
        AttemptWatch watch = watch();
        Leadership l;
        try {
            l = service.campaign(value);
        } catch (Throwable e) {
            watch.threw(e);
            throw e;
        }
        won(watch, l);
        return l;
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        AttemptWatch watch = watch();
        Leadership l;
        try {
            l = service.campaign(value, timeout);
        } catch (TimeoutException e) {
            watch.ended(
                    timeout != null && (timeout.isZero() || timeout.isNegative())
                            ? AcquisitionObserver.Outcome.BUSY
                            : AcquisitionObserver.Outcome.TIMED_OUT,
                    null);
            throw e;
        } catch (Throwable e) {
            watch.threw(e);
            throw e;
        }
        won(watch, l);
        return l;
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        AttemptWatch watch = watch();
        CompletableFuture<Leadership> campaign;
        try {
            campaign = service.campaignAsync(value);
        } catch (RuntimeException | Error e) {
            watch.threw(e);
            throw e;
        }
        if (watch != AttemptWatch.OFF) {
            campaign.whenComplete((l, e) -> { // on the service's callback executor
                if (e == null) {
                    won(watch, l);
                } else {
                    watch.failed(e);
                }
            });
        }
        return campaign;
    }

    @Override
    public Leadership proclaim(String value) {
        return service.proclaim(value);
    }

    @Override
    public CompletableFuture<Leadership> proclaimAsync(String value) {
        return service.proclaimAsync(value);
    }

    @Override
    public void resign() {
        HoldWatch w = term;
        try {
            service.resign();
        } catch (LeadershipLostException e) {
            w.lost(e);
            throw e;
        }
        w.released(); // the term ends; a candidate that did not lead has no term to tell (OFF, or told already)
    }

    @Override
    public CompletableFuture<Void> resignAsync() {
        HoldWatch w = term;
        CompletableFuture<Void> resigned = service.resignAsync();
        if (w.isOn()) {
            resigned.whenComplete((v, e) -> {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                if (cause == null) {
                    w.released();
                } else if (cause instanceof LeadershipLostException) {
                    w.lost(cause);
                } // else still leading: the caller may retry
            });
        }
        return resigned;
    }

    @Override
    public Optional<Leadership> leader() {
        return service.leader();
    }

    @Override
    public Optional<Leadership> held() {
        return service.held();
    }

    @Override
    public Observation observe(Consumer<Leadership> listener) {
        return service.observe(listener);
    }

    @Override
    public CompletionStage<Void> done() {
        return service.done();
    }

    @Override
    public Optional<LeadershipLostException> err() {
        return service.err();
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
        return service.closeAsync().whenComplete((v, e) -> {
            termEnded();
            release();
        });
    }

    @Override
    public void close() {
        try {
            service.close();
        } finally {
            termEnded(); // resigned by the close, unless it was lost
            release();
        }
    }

    @Override
    public String toString() {
        return "ElectionService[election '" + entry.name + "' of the client, " + service + "]";
    }
}

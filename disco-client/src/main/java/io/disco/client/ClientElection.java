package io.disco.client;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.Observation;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The candidate {@link Disco#election(String)} returns: the election service of the client's owner at
 * the time of the call, which it delegates to, plus the client's bookkeeping: the name is in use (as an
 * election, its {@link ElectionEntry}) from its creation until it is closed or finished, whichever comes first.
 */
final class ClientElection implements ElectionService {

    private final ElectionService service;
    private final ElectionEntry entry;
    private final Entries<ElectionEntry> entries;
    private final AtomicBoolean released = new AtomicBoolean();

    ClientElection(ElectionService service, ElectionEntry entry, Entries<ElectionEntry> entries) {
        this.service = service;
        this.entry = entry;
        this.entries = entries;
        service.done().whenComplete((v, e) -> release()); // lost or closed: the name is free for a new candidate
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
        return service.campaign(value);
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        return service.campaign(value, timeout);
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        return service.campaignAsync(value);
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
        service.resign();
    }

    @Override
    public CompletableFuture<Void> resignAsync() {
        return service.resignAsync();
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
        return service.closeAsync().whenComplete((v, e) -> release());
    }

    @Override
    public void close() {
        try {
            service.close();
        } finally {
            release();
        }
    }

    @Override
    public String toString() {
        return "ElectionService[election '" + entry.name + "' of the client, " + service + "]";
    }
}

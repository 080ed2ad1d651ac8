package io.disco.provider.etcd;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Claimant.Mode;
import io.disco.core.Claimant.Role;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Who holds and who waits for a name ({@link EtcdSession#claimants}): one read-only Txn (one
 * consistent snapshot) of the name's queue, ordered by CreateRevision, plus what gives the tokens.
 *
 * <p>Holders, and their tokens, per primitive:
 * <ul>
 *   <li>lock: the first key holds. Its token is the revision at which nobody was ahead: the key's
 *       CreateRevision when it did not wait (told by a read of the queue at that revision, which
 *       finds it first), else the {@code token} this library records in the value after a waited
 *       acquisition (empty until that write lands, and for other clients' holders that waited, or
 *       when the revision was compacted). The hold began at the key's {@code claimedAt} when it did not
 *       wait, else at the {@code heldSince} recorded with the token;</li>
 *   <li>read/write lock: the first key, if it is a writer's; else every reader created before the
 *       first writer. A reader's token is the phase marker's CreateRevision; a writer's is
 *       not listed (empty): it is the revision of its admission Txn, which no key keeps, and it is
 *       not recorded in the writer's key because a Put would move the key's ModRevision, by which
 *       etcd's Go RWMutex finds the writer that blocks a reader. A reader created when no writer's key
 *       existed (told by a read of the writers at its CreateRevision) held from its {@code claimedAt}; when
 *       a reader that waited, or a writer, began to hold is not kept;</li>
 *   <li>semaphore: the first {@code limit} keys (the limit recorded for the name; every key when none
 *       is recorded, as for a name only Go programs use); a holder's token is the ModRevision of the
 *       slot key that names it; when the hold began is not kept;</li>
 *   <li>election: the first key leads; its token is its CreateRevision. The value is the candidate's;
 *       the metadata is {@link ClaimMetadata#EMPTY} (nothing is written into an election's value), and
 *       when the term began is not kept.</li>
 * </ul>
 */
final class ClaimantListing {

    private final Client client;
    private final Duration timeout;

    ClaimantListing(Client client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    List<Claimant> list(Primitive primitive, String name) {
        Objects.requireNonNull(primitive, "primitive");
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank, got '" + name + "'");
        }
        SessionThread.refuseOnSessionThread("claimants()");
        switch (primitive) {
            case LOCK:
                return lock(name);
            case RWLOCK:
                return rwlock(name);
            case SEMAPHORE:
                return semaphore(name);
            default:
                return election(name);
        }
    }

    private List<Claimant> lock(String name) {
        KeyRange queue = KeyRange.prefix(EtcdKeys.queue(name));
        List<KeyValue> keys = read(byCreation(queue)).getGetResponses().get(0).getKvs();
        List<Claimant> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyValue kv = keys.get(i);
            Optional<FencingToken> token = Optional.empty();
            Optional<Instant> heldSince = Optional.empty();
            if (i == 0) {
                String value = text(kv.getValue());
                token = ClaimMetadata.tokenIn(value).map(FencingToken::of);
                heldSince = ClaimMetadata.heldSinceIn(value);
                if (token.isEmpty() && createdFirst(queue, kv)) {
                    token = Optional.of(FencingToken.of(kv.getCreateRevision()));
                    heldSince = ClaimMetadata.parse(value).claimedAt(); // it did not wait
                }
            }
            out.add(claimant(kv, i == 0 ? Role.HOLDER : Role.WAITER, i, Mode.EXCLUSIVE, token, heldSince, true));
        }
        return out;
    }

    private List<Claimant> rwlock(String name) {
        ByteSequence writerStart = KeyRange.bytes(EtcdKeys.writers(name));
        KeyRange everyone = new KeyRange(KeyRange.bytes(EtcdKeys.readers(name)), OptionsUtil.prefixEndOf(writerStart));
        TxnResponse r =
                read(byCreation(everyone), Op.get(KeyRange.bytes(EtcdKeys.phaseMarker(name)), GetOption.DEFAULT));
        List<KeyValue> keys = r.getGetResponses().get(0).getKvs();
        List<KeyValue> marker = r.getGetResponses().get(1).getKvs();
        Optional<FencingToken> phase = marker.isEmpty()
                ? Optional.empty()
                : Optional.of(FencingToken.of(marker.get(0).getCreateRevision()));
        List<Claimant> out = new ArrayList<>(keys.size());
        boolean writerSeen = false;
        for (int i = 0; i < keys.size(); i++) {
            KeyValue kv = keys.get(i);
            boolean writer = kv.getKey().startsWith(writerStart);
            boolean holds = writer ? i == 0 : !writerSeen;
            writerSeen |= writer;
            Optional<FencingToken> token = holds && !writer ? phase : Optional.empty();
            // a reader created when no writer's key existed joined (or opened) the read phase at once
            boolean joinedAtClaim =
                    holds && !writer && noneAt(KeyRange.prefix(EtcdKeys.writers(name)), kv.getCreateRevision());
            Optional<Instant> heldSince =
                    joinedAtClaim ? ClaimMetadata.parse(text(kv.getValue())).claimedAt() : Optional.empty();
            out.add(claimant(
                    kv,
                    holds ? Role.HOLDER : Role.WAITER,
                    i,
                    writer ? Mode.EXCLUSIVE : Mode.SHARED,
                    token,
                    heldSince,
                    true));
        }
        return out;
    }

    private List<Claimant> semaphore(String name) {
        KeyRange queue = KeyRange.prefix(EtcdKeys.queue(name));
        KeyRange slots = KeyRange.prefix(EtcdKeys.slots(name));
        TxnResponse r = read(
                byCreation(queue),
                Op.get(slots.start(), GetOption.builder().withRange(slots.end()).build()),
                Op.get(KeyRange.bytes(EtcdKeys.limitRecord(name)), GetOption.DEFAULT));
        List<KeyValue> keys = r.getGetResponses().get(0).getKvs();
        Map<String, Long> slotTokens = new HashMap<>();
        for (KeyValue slot : r.getGetResponses().get(1).getKvs()) {
            slotTokens.put(text(slot.getValue()), slot.getModRevision());
        }
        int limit = keys.size();
        List<KeyValue> recorded = r.getGetResponses().get(2).getKvs();
        if (!recorded.isEmpty()) {
            try {
                limit = Integer.parseInt(text(recorded.get(0).getValue()));
            } catch (NumberFormatException e) {
                // not this library's record: every key is listed as a holder
            }
        }
        List<Claimant> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyValue kv = keys.get(i);
            boolean holds = i < limit;
            Long slotToken = slotTokens.get(text(kv.getKey()) + "@" + kv.getCreateRevision());
            Optional<FencingToken> token =
                    holds && slotToken != null ? Optional.of(FencingToken.of(slotToken)) : Optional.empty();
            out.add(claimant(kv, holds ? Role.HOLDER : Role.WAITER, i, Mode.SHARED, token, Optional.empty(), true));
        }
        return out;
    }

    private List<Claimant> election(String name) {
        List<KeyValue> keys = read(byCreation(KeyRange.prefix(EtcdKeys.queue(name))))
                .getGetResponses()
                .get(0)
                .getKvs();
        List<Claimant> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            KeyValue kv = keys.get(i);
            Optional<FencingToken> token =
                    i == 0 ? Optional.of(FencingToken.of(kv.getCreateRevision())) : Optional.empty();
            out.add(claimant(
                    kv, i == 0 ? Role.HOLDER : Role.WAITER, i, Mode.EXCLUSIVE, token, Optional.empty(), false));
        }
        return out;
    }

    private static Claimant claimant(
            KeyValue kv,
            Role role,
            int position,
            Mode mode,
            Optional<FencingToken> token,
            Optional<Instant> heldSince,
            boolean metadata) {
        String value = text(kv.getValue());
        return new Claimant(
                text(kv.getKey()),
                kv.getLease(),
                role,
                position,
                mode,
                token,
                heldSince,
                metadata ? ClaimMetadata.parse(value) : ClaimMetadata.EMPTY,
                value);
    }

    /**
     * Whether {@code kv} was the first key of {@code queue} when it was created (it did not wait): a
     * read of the queue at its CreateRevision. False when that revision is compacted or unreadable.
     */
    private boolean createdFirst(KeyRange queue, KeyValue kv) {
        GetOption first = GetOption.builder()
                .withRange(queue.end())
                .withRevision(kv.getCreateRevision())
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .withKeysOnly(true)
                .build();
        try {
            GetResponse r =
                    client.getKVClient().get(queue.start(), first).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return !r.getKvs().isEmpty() && r.getKvs().get(0).getKey().equals(kv.getKey());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false; // compacted, or no answer: the token is left unknown
        }
    }

    /** Whether {@code range} had no key at {@code revision}; false when that revision is compacted or unreadable. */
    private boolean noneAt(KeyRange range, long revision) {
        GetOption count = GetOption.builder()
                .withRange(range.end())
                .withRevision(revision)
                .withCountOnly(true)
                .build();
        try {
            return client.getKVClient()
                            .get(range.start(), count)
                            .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                            .getCount()
                    == 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false; // compacted, or no answer: left unknown
        }
    }

    private static Op byCreation(KeyRange range) {
        return Op.get(
                range.start(),
                GetOption.builder()
                        .withRange(range.end())
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND)
                        .build());
    }

    /** One read-only Txn: every Get of one snapshot, answered within the request timeout. */
    private TxnResponse read(Op... gets) {
        CompletableFuture<TxnResponse> f = client.getKVClient().txn().Then(gets).commit();
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while listing claimants", e);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new DiscoException(
                    "etcd could not be reached: no answer to the listing of claimants within " + timeout.toMillis()
                            + " ms",
                    e);
        } catch (ExecutionException e) {
            throw EtcdErrors.failure("listing of claimants", e.getCause());
        }
    }

    private static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }
}

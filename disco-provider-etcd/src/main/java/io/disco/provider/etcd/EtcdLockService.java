package io.disco.provider.etcd;

import io.disco.core.ClaimMetadata;
import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.etcd.jetcd.ByteSequence;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * etcd's {@code concurrency.Mutex} behind {@link LockService}: the own key is
 * {@code <name>/<lease id in hex>}; the owner is the key with the lowest CreateRevision under
 * {@code <name>/}; the fencing token is the cluster revision at which ownership was established.
 */
final class EtcdLockService extends EtcdService<Grant, LockLostException> implements LockService {

    private final String key;
    private final ByteSequence ownKey;
    private final KeyRange queue;

    private EtcdLockService(SessionCore session, String name, boolean ownsSession) {
        super(session, name, Primitive.LOCK, "lock", ownsSession);
        this.key = leaseKey(name);
        this.ownKey = KeyRange.bytes(key);
        this.queue = KeyRange.prefix(EtcdKeys.queue(name));
    }

    static EtcdLockService create(SessionCore session, String name, boolean ownsSession) {
        return register(new EtcdLockService(session, name, ownsSession));
    }

    @Override
    public Grant lock() throws InterruptedException {
        try {
            return acquire("lock.lock()", null, UnaryOperator.identity(), () -> new LockClaim(false));
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Grant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquireWithin(
                "lock.lock()",
                timeout,
                UnaryOperator.identity(),
                () -> new LockClaim(false),
                () -> new LockClaim(true));
    }

    @Override
    public Optional<Grant> tryLock() {
        return tryAcquire("lock.tryLock()", UnaryOperator.identity(), () -> new LockClaim(true));
    }

    @Override
    public CompletableFuture<Grant> lockAsync() {
        return acquireAsync(UnaryOperator.identity(), () -> new LockClaim(false));
    }

    @Override
    public void unlock() {
        release("lock.unlock()", "release");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync("release");
    }

    @Override
    LockLostException lostException(String message, Throwable cause) {
        return new LockLostException(message, cause);
    }

    private final class LockClaim extends QueueClaim<Grant> {

        private final ClaimMetadata metadata;

        LockClaim(boolean tryOnly) {
            this(tryOnly, EtcdLockService.this.session.claimMetadata());
        }

        /** The own key's value is the claim's metadata (Go's Mutex writes an empty value and never reads it). */
        private LockClaim(boolean tryOnly, ClaimMetadata metadata) {
            super(EtcdLockService.this, EtcdLockService.this.ownKey, KeyRange.bytes(metadata.toJson()), tryOnly);
            this.metadata = metadata;
        }

        @Override
        KeyRange waitRange() {
            return queue;
        }

        /**
         * The token: the cluster revision at which nobody was ahead any more. When that is not the own
         * key's CreateRevision (the claim waited, or adopted its key), etcd keeps it nowhere: it is
         * recorded in the own key's value, for the listing of claimants, with the time the hold began
         * (this host's clock), once the hold has lasted {@link TokenRecord#AFTER_MS} (see there).
         */
        @Override
        CompletableFuture<Grant> grant(long myRevision, long revision) {
            if (revision != myRevision) {
                String json = metadata.toJson(revision, Instant.now());
                session.schedule(
                        () -> {
                            if (heldCreateRevision() == myRevision) {
                                TokenRecord.send(session, ownKey, myRevision, json);
                            }
                        },
                        TokenRecord.AFTER_MS,
                        TimeUnit.MILLISECONDS);
            }
            return CompletableFuture.completedFuture(new Grant(key, FencingToken.of(revision)));
        }
    }
}

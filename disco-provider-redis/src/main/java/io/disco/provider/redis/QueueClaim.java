package io.disco.provider.redis;

import io.disco.core.internal.grant.WorkedAcquisition;
import io.disco.fencing.Fenced;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * One acquisition of a queue service: what it asks for (its kind, one try or a wait, its claim's value), its outcome
 * ({@link #future}), and its claim: a random id, fixed before the first request, so that a request whose answer was
 * lost is sent again with the same id and the script adopts the claim an earlier copy made. Run by a worker
 * ({@link ClaimWorker}), which alone enqueues and withdraws the claim; the caller waits on {@link #future} and, when
 * it gives up, on {@link #withdrawn}. {@link #wake} is released by everything the worker may wait for (a message that
 * admits the claim, the end of the attempt, a confirmed release).
 *
 * @param <G> the grant
 */
final class QueueClaim<G extends Fenced> extends WorkedAcquisition<G> {

    private static final SecureRandom IDS = new SecureRandom();

    final ClaimKind kind;
    /** The claim's value (an election candidate's), or "". */
    final String value;
    /** Who claims ({@code ClaimMetadata}'s JSON), made on the calling thread. */
    final String meta;
    /** The claim's id, unique: 16 random hex digits. */
    final String id;
    /** The claim's Redis key. */
    final String key;
    /** The claim's key as its grant reports it: {@code <name>/<id>}. */
    final String grantKey;

    QueueClaim(String name, ClaimKind kind, boolean tryOnly, String value, String meta) {
        super(tryOnly);
        this.kind = kind;
        this.value = value;
        this.meta = meta;
        byte[] b = new byte[8];
        IDS.nextBytes(b);
        this.id = HexFormat.of().formatHex(b);
        this.key = RedisKeys.claim(name, id);
        this.grantKey = RedisKeys.grantKey(name, id);
    }

    @Override
    public String toString() {
        return "claim " + key;
    }
}

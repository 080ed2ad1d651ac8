package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;

/**
 * What a claim's create Txn found (see {@code QueueClaim}): the own key's CreateRevision, whether
 * someone is ahead, the revision of the answer, the value of an existing own key that the claim
 * adopted (null when the Txn created the key), and the keys ahead when the Txn created the key (else
 * null: the wait reads them).
 */
record CreateAnswer(long myRevision, boolean mustWait, long revision, ByteSequence adoptedValue, Ahead ahead) {

    /**
     * Reads the answer to the create Txn: {@code If(CreateRevision(ownKey) == 0)}
     * {@code Then(Put(ownKey), Get(range))} {@code Else(Get(ownKey), Get(range))}, where the range's
     * Get is the newest {@link Ahead#readLimit} keys by CreateRevision in the Then branch (the own key
     * among them when the range holds it), and in the Else branch, with {@code allowed == 0}, the
     * first-created key, else a count of the range.
     *
     * <p>jetcd's {@link TxnResponse#getGetResponses()} lists only the Get results, without the Put:
     * the Then branch's read of the range is at index 0, the Else branch's at index 1, after the own
     * key at index 0 (rule 1: a straight port of Go's {@code Responses[1]} would read past the end in
     * the Then branch, or conclude "I own it" every time). A pure function.
     *
     * @param allowed how many keys created before the own key may remain: 0 for the mutual-exclusion
     *     recipes, {@code limit - 1} for a semaphore
     */
    static CreateAnswer of(TxnResponse r, ByteSequence ownKey, int allowed) {
        if (r.isSucceeded()) {
            long myRevision = r.getHeader().getRevision();
            Ahead ahead = Ahead.of(r.getGetResponses().get(0).getKvs(), ownKey, allowed, myRevision);
            return new CreateAnswer(myRevision, ahead.size() > allowed, myRevision, null, ahead);
        }
        KeyValue own = r.getGetResponses().get(0).getKvs().get(0);
        long myRevision = own.getCreateRevision();
        GetResponse first = r.getGetResponses().get(1);
        boolean mustWait = allowed == 0
                ? !first.getKvs().isEmpty() && first.getKvs().get(0).getCreateRevision() < myRevision
                : first.getCount() - 1 > allowed;
        return new CreateAnswer(myRevision, mustWait, r.getHeader().getRevision(), own.getValue(), null);
    }
}

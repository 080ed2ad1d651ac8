package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;

/**
 * What a claim's create Txn found (see {@code QueueClaim}): the own key's CreateRevision, whether
 * someone is ahead, the revision of the answer, the value of an existing own key that the claim
 * adopted (null when the Txn created the key), and the newest key ahead when the Txn created the key
 * and none may be ahead (else null: the wait reads it).
 */
record CreateAnswer(long myRevision, boolean mustWait, long revision, ByteSequence adoptedValue, KeyValue predecessor) {

    /**
     * Reads the answer to the create Txn: {@code If(CreateRevision(ownKey) == 0)}
     * {@code Then(Put(ownKey), Get(range))} {@code Else(Get(ownKey), Get(range))}, where the range's
     * Get is, with {@code allowed == 0}, the newest two keys by CreateRevision in the Then branch and
     * the first-created key in the Else branch, and a count of the range otherwise.
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
            GetResponse read = r.getGetResponses().get(0);
            if (allowed > 0) {
                return new CreateAnswer(myRevision, read.getCount() - 1 > allowed, myRevision, null, null);
            }
            KeyValue predecessor = read.getKvs().stream()
                    .filter(kv -> !kv.getKey().equals(ownKey))
                    .findFirst()
                    .orElse(null);
            return new CreateAnswer(myRevision, predecessor != null, myRevision, null, predecessor);
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

package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.PutResponse;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.ResponseHeader;
import io.etcd.jetcd.api.ResponseOp;
import io.etcd.jetcd.kv.TxnResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The parsing of a claim's create Txn answer, on answers built from etcd's own protobuf messages, as
 * etcd sends them: the Then branch answers (Put, Range), the Else branch (Range of the own key,
 * Range). jetcd lists the Get results only, so the Then branch's read is at index 0 and the Else
 * branch's at index 1 (rule 1). Runs without etcd.
 */
class CreateAnswerTest {

    private static final ByteSequence OWN = KeyRange.bytes("/locks/a/694d8a2e1c7b3f05");

    @Test
    void createdAndNobodyAhead() {
        CreateAnswer a = CreateAnswer.of(then(20, range(0, kv("/locks/a/694d8a2e1c7b3f05", 20, ""))), OWN, 0);
        assertEquals(20, a.myRevision());
        assertFalse(a.mustWait());
        assertEquals(20, a.revision());
        assertNull(a.adoptedValue());
        assertNull(a.predecessor());
    }

    @Test
    void createdBehindAPredecessorNamesIt() {
        // The newest two keys of the range by CreateRevision, newest first: the own key, then the predecessor.
        CreateAnswer a = CreateAnswer.of(
                then(20, range(0, kv("/locks/a/694d8a2e1c7b3f05", 20, ""), kv("/locks/a/1234", 17, ""))), OWN, 0);
        assertEquals(20, a.myRevision());
        assertTrue(a.mustWait());
        assertEquals("/locks/a/1234", a.predecessor().getKey().toString(StandardCharsets.UTF_8));
        assertEquals(17, a.predecessor().getCreateRevision());
    }

    @Test
    void createdInAWaitRangeWithoutTheOwnKey() {
        // A read/write lock's reader waits on the writers' range, which does not hold its own key.
        CreateAnswer a = CreateAnswer.of(then(30, range(0, kv("/rw/write/77", 25, ""))), OWN, 0);
        assertTrue(a.mustWait());
        assertEquals(25, a.predecessor().getCreateRevision());
        assertFalse(CreateAnswer.of(then(30, range(0)), OWN, 0).mustWait());
    }

    @Test
    void createdInASemaphoreCountsThePredecessors() {
        // limit 3: two may be ahead; the count includes the own key.
        assertFalse(CreateAnswer.of(then(40, range(3)), OWN, 2).mustWait());
        CreateAnswer behind = CreateAnswer.of(then(40, range(4)), OWN, 2);
        assertTrue(behind.mustWait());
        assertEquals(40, behind.myRevision());
        assertNull(behind.predecessor());
    }

    @Test
    void adoptedKeyKeepsItsCreateRevisionAndValue() {
        // Else branch: the own key at index 0, the first-created key of the range at index 1.
        TxnResponse r = otherwise(
                50,
                range(0, kv("/locks/a/694d8a2e1c7b3f05", 12, "node-a")),
                range(0, kv("/locks/a/694d8a2e1c7b3f05", 12, "node-a")));
        CreateAnswer a = CreateAnswer.of(r, OWN, 0);
        assertEquals(12, a.myRevision(), "the adopted key's CreateRevision, not the answer's revision");
        assertFalse(a.mustWait(), "the first-created key is the own key: nobody is ahead");
        assertEquals(50, a.revision());
        assertEquals("node-a", a.adoptedValue().toString(StandardCharsets.UTF_8));
        assertNull(a.predecessor(), "the wait reads the predecessor itself");
    }

    @Test
    void adoptedKeyBehindAnOwnerMustWait() {
        TxnResponse r =
                otherwise(50, range(0, kv("/locks/a/694d8a2e1c7b3f05", 12, "")), range(0, kv("/locks/a/1234", 9, "")));
        CreateAnswer a = CreateAnswer.of(r, OWN, 0);
        assertTrue(a.mustWait());
        assertEquals(12, a.myRevision());
        assertEquals("", a.adoptedValue().toString(StandardCharsets.UTF_8));
    }

    @Test
    void adoptedKeyInASemaphoreCountsThePredecessors() {
        TxnResponse r = otherwise(60, range(0, kv("/locks/a/694d8a2e1c7b3f05", 12, "")), range(2));
        assertFalse(CreateAnswer.of(r, OWN, 1).mustWait());
        r = otherwise(60, range(0, kv("/locks/a/694d8a2e1c7b3f05", 12, "")), range(3));
        assertTrue(CreateAnswer.of(r, OWN, 1).mustWait());
    }

    // ---------------------------------------------------------------- etcd's answers

    private static TxnResponse then(long revision, RangeResponse read) {
        return txn(
                true,
                revision,
                ResponseOp.newBuilder()
                        .setResponsePut(PutResponse.newBuilder().setHeader(header(revision)))
                        .build(),
                ResponseOp.newBuilder().setResponseRange(read).build());
    }

    private static TxnResponse otherwise(long revision, RangeResponse own, RangeResponse read) {
        return txn(
                false,
                revision,
                ResponseOp.newBuilder().setResponseRange(own).build(),
                ResponseOp.newBuilder().setResponseRange(read).build());
    }

    private static TxnResponse txn(boolean succeeded, long revision, ResponseOp... ops) {
        io.etcd.jetcd.api.TxnResponse.Builder b = io.etcd.jetcd.api.TxnResponse.newBuilder()
                .setHeader(header(revision))
                .setSucceeded(succeeded);
        for (ResponseOp op : ops) {
            b.addResponses(op);
        }
        return new TxnResponse(b.build(), ByteSequence.EMPTY);
    }

    private static ResponseHeader header(long revision) {
        return ResponseHeader.newBuilder()
                .setRevision(revision)
                .setClusterId(1)
                .setMemberId(2)
                .setRaftTerm(3)
                .build();
    }

    /** A range answer with {@code kvs}; its count is {@code count}, or the number of kvs when 0. */
    private static RangeResponse range(long count, KeyValue... kvs) {
        RangeResponse.Builder b = RangeResponse.newBuilder().setCount(count == 0 ? kvs.length : count);
        for (KeyValue kv : kvs) {
            b.addKvs(kv);
        }
        return b.build();
    }

    private static KeyValue kv(String key, long createRevision, String value) {
        return KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFromUtf8(value))
                .setCreateRevision(createRevision)
                .setModRevision(createRevision)
                .setVersion(1)
                .build();
    }
}

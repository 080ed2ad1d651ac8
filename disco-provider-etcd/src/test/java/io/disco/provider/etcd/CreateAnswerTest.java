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
        assertEquals(0, a.ahead().size());
        assertTrue(a.ahead().complete());
        assertEquals(20, a.ahead().knownAt());
    }

    @Test
    void createdBehindOthersNamesThem() {
        // The newest keys of the range by CreateRevision, newest first: the own key, then the keys ahead.
        CreateAnswer a = CreateAnswer.of(
                then(
                        20,
                        range(
                                0,
                                kv("/locks/a/694d8a2e1c7b3f05", 20, ""),
                                kv("/locks/a/1234", 17, ""),
                                kv("/locks/a/99", 11, ""))),
                OWN,
                0);
        assertEquals(20, a.myRevision());
        assertTrue(a.mustWait());
        assertEquals(2, a.ahead().size());
        assertTrue(a.ahead().complete());
        assertFalse(a.ahead().deleted(OWN), "the own key is not ahead of itself");
        assertTrue(a.ahead().deleted(KeyRange.bytes("/locks/a/99")));
        assertFalse(a.ahead().deleted(KeyRange.bytes("/locks/a/99")), "a name is ahead once");
        assertEquals(1, a.ahead().size());
    }

    @Test
    void aQueueLongerThanOneReadIsNotKnownWhole() {
        RangeResponse.Builder read = RangeResponse.newBuilder().setHeader(header(500));
        read.addKvs(kv("/locks/a/694d8a2e1c7b3f05", 500, ""));
        for (int i = 0; i < Ahead.readLimit(0); i++) {
            read.addKvs(kv("/locks/a/" + i, 400 - i, ""));
        }
        CreateAnswer a = CreateAnswer.of(then(500, read.build()), OWN, 0);
        assertTrue(a.mustWait());
        assertEquals(Ahead.readLimit(0), a.ahead().size());
        assertFalse(a.ahead().complete(), "as many names as the read asks for may be the newest of more");
    }

    @Test
    void createdInAWaitRangeWithoutTheOwnKey() {
        // A read/write lock's reader waits on the writers' range, which does not hold its own key.
        CreateAnswer a = CreateAnswer.of(then(30, range(0, kv("/rw/write/77", 25, ""))), OWN, 0);
        assertTrue(a.mustWait());
        assertEquals(1, a.ahead().size());
        assertFalse(CreateAnswer.of(then(30, range(0)), OWN, 0).mustWait());
    }

    @Test
    void createdInASemaphoreMayHaveOthersAhead() {
        // limit 3: two may be ahead.
        assertFalse(CreateAnswer.of(then(40, range(0, kv("/s/1", 30, ""), kv("/s/2", 31, ""))), OWN, 2)
                .mustWait());
        CreateAnswer behind =
                CreateAnswer.of(then(40, range(0, kv("/s/1", 30, ""), kv("/s/2", 31, ""), kv("/s/3", 32, ""))), OWN, 2);
        assertTrue(behind.mustWait());
        assertEquals(40, behind.myRevision());
        assertEquals(3, behind.ahead().size());
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
        assertNull(a.ahead(), "the wait reads the keys ahead itself");
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

package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import java.nio.charset.StandardCharsets;

/** A half-open etcd key range {@code [start, end)}. */
record KeyRange(ByteSequence start, ByteSequence end) {

    /** Every key that starts with {@code prefix}. */
    static KeyRange prefix(String prefix) {
        ByteSequence start = bytes(prefix);
        return new KeyRange(start, OptionsUtil.prefixEndOf(start));
    }

    /**
     * Options for a Get of {@link #start()} that reads the key of this range with the lowest
     * CreateRevision: the owner of a lock, the leader of an election, the first in a wait range.
     */
    GetOption firstCreated() {
        return GetOption.builder()
                .withRange(end)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .build();
    }

    @Override
    public String toString() {
        return "[" + start.toString(StandardCharsets.UTF_8) + ", " + end.toString(StandardCharsets.UTF_8) + ")";
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}

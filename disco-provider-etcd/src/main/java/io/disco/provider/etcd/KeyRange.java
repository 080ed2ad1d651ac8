package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.OptionsUtil;
import java.nio.charset.StandardCharsets;

/** A half-open etcd key range {@code [start, end)}. */
record KeyRange(ByteSequence start, ByteSequence end) {

    /** Every key that starts with {@code prefix}. */
    static KeyRange prefix(String prefix) {
        ByteSequence start = bytes(prefix);
        return new KeyRange(start, OptionsUtil.prefixEndOf(start));
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}

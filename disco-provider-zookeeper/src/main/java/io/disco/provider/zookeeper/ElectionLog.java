package io.disco.provider.zookeeper;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The proclamation log an election keeps in the data of its directory node ({@code <path>}).
 *
 * <p>ZooKeeper's watches carry no data and ZooKeeper keeps no history, and a leader's node (with its value) goes
 * when the term ends: an observer that re-reads after a change may find a later value than the one that woke it,
 * or no node at all. So a disco leader appends an entry (the term's czxid, the number of the value in its term,
 * the node's name, the value) to this log when its term starts (number 0) and with every proclamation (1, 2, ...),
 * each in a transaction that checks that its node still exists; the log is where a proclaimed value lives (the
 * node keeps the campaign value), and an observer
 * delivers the entries it has not delivered yet, in order, even those of terms whose nodes are gone. The last
 * {@link #MAX_ENTRIES} entries (and at most about {@link #MAX_BYTES} bytes) are kept: an observer more than that
 * many proclamations behind skips the older ones.
 *
 * <p>Layout: the bytes {@code 0xFF 'D' 'L' 1}, then per entry {@code long czxid, int version, UTF name,
 * UTF value}, oldest first. Data that does not start so (a directory somebody else wrote) is not a log: it is
 * left alone and proclamations then go unlogged.
 */
final class ElectionLog {

    /** The most entries kept. */
    static final int MAX_ENTRIES = 64;
    /** The most bytes kept, about (ZooKeeper's default limit on a node is 1 MiB). */
    static final int MAX_BYTES = 256 * 1024;

    private static final byte[] MAGIC = {(byte) 0xFF, 'D', 'L', 1};

    /**
     * One value of a term: the value {@code value} of the term of the node {@code name} (created at
     * {@code czxid}), its {@code version}-th in the term (0: the value it campaigned with).
     */
    record Entry(long czxid, int version, String name, String value) {}

    private ElectionLog() {}

    /**
     * @param data the directory's data (null or empty: an empty log)
     * @return the entries, oldest first; null if the data is not a log
     */
    static List<Entry> decode(byte[] data) {
        List<Entry> entries = new ArrayList<>();
        if (data == null || data.length == 0) {
            return entries;
        }
        if (data.length < MAGIC.length) {
            return null;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (data[i] != MAGIC[i]) {
                return null;
            }
        }
        try (DataInputStream in =
                new DataInputStream(new ByteArrayInputStream(data, MAGIC.length, data.length - MAGIC.length))) {
            while (in.available() > 0) {
                entries.add(new Entry(in.readLong(), in.readInt(), in.readUTF(), in.readUTF()));
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return entries;
    }

    /** @return {@code entries} with {@code next} appended, as data, without the oldest beyond the limits */
    static byte[] append(List<Entry> entries, Entry next) {
        List<Entry> kept = new ArrayList<>(entries);
        kept.add(next);
        while (kept.size() > MAX_ENTRIES) {
            kept.remove(0);
        }
        while (true) {
            byte[] data = encode(kept);
            if (data.length <= MAX_BYTES || kept.size() == 1) {
                return data;
            }
            kept.remove(0);
        }
    }

    private static byte[] encode(List<Entry> entries) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.write(MAGIC);
            for (Entry e : entries) {
                out.writeLong(e.czxid());
                out.writeInt(e.version());
                out.writeUTF(e.name());
                out.writeUTF(e.value());
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException("cannot happen in memory", e);
        }
    }
}

package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The election's log in its directory's data: round trip, limits, and data that is not a log left alone. */
class ElectionLogTest {

    @Test
    void entriesRoundTripOldestFirstAndTheOldestGoBeyondTheLimit() {
        List<ElectionLog.Entry> log = ElectionLog.decode(null);
        assertEquals(List.of(), log);
        assertEquals(List.of(), ElectionLog.decode(new byte[0]));
        List<ElectionLog.Entry> expected = new ArrayList<>();
        for (int i = 0; i < ElectionLog.MAX_ENTRIES + 5; i++) {
            ElectionLog.Entry e =
                    new ElectionLog.Entry(100 + i / 3, i % 3, "_c_x-latch-000000000" + i / 3, "välue " + i);
            expected.add(e);
            log = ElectionLog.decode(ElectionLog.append(log, e));
        }
        assertEquals(expected.subList(5, expected.size()), log);

        String big = "x".repeat(100_000);
        List<ElectionLog.Entry> bigLog = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            bigLog = ElectionLog.decode(
                    ElectionLog.append(bigLog, new ElectionLog.Entry(i, 0, "n", big.substring(0, 60_000))));
        }
        assertTrue(
                ElectionLog.append(bigLog, new ElectionLog.Entry(11, 0, "n", "last")).length <= ElectionLog.MAX_BYTES);
    }

    @Test
    void dataThatIsNotALogIsNotReadAsOne() {
        assertNull(ElectionLog.decode("somebody's config".getBytes(StandardCharsets.UTF_8)));
        assertNull(ElectionLog.decode(new byte[] {(byte) 0xFF, 'D', 'L', 1, 0, 0, 1})); // truncated
    }
}

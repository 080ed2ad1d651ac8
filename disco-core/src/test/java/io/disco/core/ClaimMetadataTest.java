package io.disco.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ClaimMetadataTest {

    @Test
    void roundTripsEveryFieldWithCharactersJsonMustEscape() {
        String nasty = "pool \"a\"\\b\n\t\u0001é/✓";
        ClaimMetadata m = new ClaimMetadata(
                ClaimMetadata.Source.DISCO,
                "host-1",
                4711,
                nasty,
                nasty,
                Optional.of(Instant.parse("2026-12-05T07:30:00.123Z")));
        String json = m.toJson();
        assertTrue(json.startsWith("{\"host\":\"host-1\",\"pid\":4711,"), json);
        assertEquals(m, ClaimMetadata.parse(json));
        assertEquals(Optional.empty(), ClaimMetadata.tokenIn(json));
        Instant held = Instant.parse("2026-12-05T07:31:02.5Z");
        assertEquals(m, ClaimMetadata.parse(m.toJson(99, held)));
        assertEquals(Optional.of(99L), ClaimMetadata.tokenIn(m.toJson(99, held)));
        assertEquals(Optional.of(held), ClaimMetadata.heldSinceIn(m.toJson(99, held)));
        assertEquals(Optional.empty(), ClaimMetadata.heldSinceIn("{\"host\":\"h\",\"token\":99}"));
        assertEquals(Optional.of(99L), ClaimMetadata.tokenIn("{\"host\":\"h\",\"token\":99}"));
        assertEquals(Optional.empty(), ClaimMetadata.heldSinceIn("{\"heldSince\":\"yesterday\"}"));
        assertEquals(Optional.empty(), ClaimMetadata.heldSinceIn("not json"));
    }

    @Test
    void ofCurrentThreadNamesThisThreadAndProcess() {
        ClaimMetadata m = ClaimMetadata.ofCurrentThread("orders-7");
        assertEquals(Thread.currentThread().getName(), m.thread());
        assertEquals(ProcessHandle.current().pid(), m.pid());
        assertEquals("orders-7", m.clientId());
        assertTrue(m.claimedAt().isPresent());
        assertEquals(m.withoutTime(), ClaimMetadata.parse(m.toJson()).withoutTime());
    }

    @Test
    void nowKeepsTheProcessAndClientAndTakesThisThreadAndTime() throws Exception {
        ClaimMetadata opened = new ClaimMetadata(
                ClaimMetadata.Source.DISCO, "host-a", 42, "orders", "opener", Optional.of(Instant.EPOCH));
        AtomicReference<ClaimMetadata> made = new AtomicReference<>();
        Thread t = new Thread(() -> made.set(opened.now()), "claimer-1");
        t.start();
        t.join(10_000);
        ClaimMetadata m = made.get();
        assertEquals(
                new ClaimMetadata(ClaimMetadata.Source.DISCO, "host-a", 42, "orders", "claimer-1", m.claimedAt()), m);
        assertTrue(m.claimedAt().orElseThrow().isAfter(Instant.EPOCH));
    }

    @Test
    void otherClientsValuesAreEmptyOrUnknownNeverAnError() {
        assertSame(ClaimMetadata.EMPTY, ClaimMetadata.parse(""));
        assertSame(ClaimMetadata.EMPTY, ClaimMetadata.parse(null));
        for (String bad : new String[] {
            "{",
            "{\"host\":",
            "{\"host\":\"a\"",
            "{\"host\":\"a\"} trailing",
            "node-a",
            "[1,2]",
            "{\"other\":1}",
            "{\"host\":\"\\u12\"}",
            "{\"host\":\"\\x\"}",
            "\"host\"",
            "{\"host\" \"a\"}",
            "{\"pid\":--1}",
            "{\"host\":\"a\",}",
            "{".repeat(10_000)
        }) {
            assertSame(ClaimMetadata.UNKNOWN, ClaimMetadata.parse(bad), bad);
            assertEquals(Optional.empty(), ClaimMetadata.tokenIn(bad), bad);
        }
    }

    @Test
    void unknownFieldsNestedValuesAndABadTimeAreSkipped() {
        ClaimMetadata m = ClaimMetadata.parse(" {\"v\":2,\"host\":\"h\",\"extra\":{\"a\":[1,{\"b\":null}],\"c\":true},"
                + "\"pid\":12,\"claimedAt\":\"yesterday\",\"token\":-3} ");
        assertEquals(new ClaimMetadata(ClaimMetadata.Source.DISCO, "h", 12, "", "", Optional.empty()), m);
        assertEquals(Optional.empty(), ClaimMetadata.tokenIn("{\"token\":-3}"));
        assertEquals(Optional.empty(), ClaimMetadata.tokenIn("{\"token\":\"7\"}"));
    }
}

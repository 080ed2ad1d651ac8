package io.disco.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.fencing.FencingToken;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClaimantTest {

    private static Claimant holding(String value) {
        return new Claimant(
                "/locks/a/1",
                7,
                Claimant.Role.HOLDER,
                0,
                Claimant.Mode.EXCLUSIVE,
                Optional.empty(),
                Optional.empty(),
                ClaimMetadata.parse(value),
                value);
    }

    @Test
    void madeByDiscoGivesTheMetadataOnlyForThisLibrarysValue() {
        String ours = "{\"host\":\"web-3\",\"pid\":4711,\"client\":\"orders\",\"thread\":\"t-1\"}";
        assertEquals(Optional.of(ClaimMetadata.parse(ours)), holding(ours).madeByDisco());
        assertEquals("t-1", holding(ours).madeByDisco().orElseThrow().thread());
        assertEquals(Optional.empty(), holding("").madeByDisco(), "etcd's Go recipes, etcdctl lock, an election");
        assertEquals(ClaimMetadata.EMPTY, holding("").metadata());
        assertEquals(Optional.empty(), holding("not json").madeByDisco());
        assertEquals(ClaimMetadata.UNKNOWN, holding("not json").metadata());
    }

    @Test
    void aWaiterHasNoTokenAndPositionsAreNotNegative() {
        assertThrows(
                IllegalArgumentException.class,
                () -> new Claimant(
                        "/k",
                        0,
                        Claimant.Role.WAITER,
                        1,
                        Claimant.Mode.EXCLUSIVE,
                        Optional.of(FencingToken.of(5)),
                        Optional.empty(),
                        ClaimMetadata.EMPTY,
                        ""));
        assertThrows(
                IllegalArgumentException.class,
                () -> new Claimant(
                        "/k",
                        0,
                        Claimant.Role.WAITER,
                        1,
                        Claimant.Mode.EXCLUSIVE,
                        Optional.empty(),
                        Optional.of(java.time.Instant.EPOCH),
                        ClaimMetadata.EMPTY,
                        ""));
        assertThrows(
                IllegalArgumentException.class,
                () -> new Claimant(
                        "/k",
                        0,
                        Claimant.Role.HOLDER,
                        -1,
                        Claimant.Mode.EXCLUSIVE,
                        Optional.empty(),
                        Optional.empty(),
                        ClaimMetadata.EMPTY,
                        ""));
        assertThrows(
                NullPointerException.class,
                () -> new Claimant(
                        "/k",
                        0,
                        Claimant.Role.HOLDER,
                        0,
                        Claimant.Mode.EXCLUSIVE,
                        Optional.empty(),
                        Optional.empty(),
                        null,
                        ""));
    }
}

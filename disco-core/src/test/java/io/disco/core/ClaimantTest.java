package io.disco.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.fencing.FencingToken;
import java.time.Instant;
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

    /** A claimant of {@code /k} on lease 0, exclusive, with an empty value. */
    private static Claimant claimantOfK(
            Claimant.Role role,
            int position,
            Optional<FencingToken> token,
            Optional<Instant> since,
            ClaimMetadata metadata) {
        return new Claimant("/k", 0, role, position, Claimant.Mode.EXCLUSIVE, token, since, metadata, "");
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
                () -> claimantOfK(
                        Claimant.Role.WAITER,
                        1,
                        Optional.of(FencingToken.of(5)),
                        Optional.empty(),
                        ClaimMetadata.EMPTY));
        assertThrows(
                IllegalArgumentException.class,
                () -> claimantOfK(
                        Claimant.Role.WAITER, 1, Optional.empty(), Optional.of(Instant.EPOCH), ClaimMetadata.EMPTY));
        assertThrows(
                IllegalArgumentException.class,
                () -> claimantOfK(Claimant.Role.HOLDER, -1, Optional.empty(), Optional.empty(), ClaimMetadata.EMPTY));
        assertThrows(
                NullPointerException.class,
                () -> claimantOfK(Claimant.Role.HOLDER, 0, Optional.empty(), Optional.empty(), null));
    }
}

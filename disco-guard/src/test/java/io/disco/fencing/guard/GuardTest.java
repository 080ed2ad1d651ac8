package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class GuardTest {

    @Test
    void aNewGuardAcceptsAnyTokenFirst() {
        Guard g = Guard.create();
        assertEquals(Optional.empty(), g.highWater());
        FencingToken one = t(1);
        assertSame(one, g.check(one));
        assertEquals(Optional.of(one), g.highWater());
    }

    @Test
    void greaterTokensAdvanceTheMark() {
        Guard g = Guard.create();
        g.check(t(34));
        g.check(t(51));
        g.check(t(Long.MAX_VALUE));
        assertEquals(Optional.of(t(Long.MAX_VALUE)), g.highWater());
    }

    @Test
    void anEqualTokenIsAcceptedAgainAndAgain() {
        Guard g = Guard.create();
        g.check(t(34));
        for (int i = 0; i < 3; i++) {
            assertEquals(t(34), g.check(t(34)));
        }
        assertEquals(Optional.of(t(34)), g.highWater());
    }

    @Test
    void aLowerTokenIsRejectedWithBothTokensAndTheMarkStays() {
        Guard g = Guard.create();
        g.check(t(51));
        TokenStaleException e = assertThrows(TokenStaleException.class, () -> g.check(t(34)));
        assertEquals(t(34), e.token());
        assertEquals(t(51), e.highWater());
        assertEquals("stale fencing token 34: the resource has already accepted 51", e.getMessage());
        assertEquals(Optional.of(t(51)), g.highWater());
        // the zombie does not get in by retrying, the current owner still does
        assertThrows(TokenStaleException.class, () -> g.check(t(50)));
        assertEquals(t(51), g.check(t(51)));
    }

    @Test
    void withInitialTokenSeedsTheMark() {
        Guard g = Guard.withInitialToken(100);
        assertEquals(Optional.of(t(100)), g.highWater());
        assertEquals(
                t(100),
                assertThrows(TokenStaleException.class, () -> g.check(t(99))).highWater());
        assertEquals(t(100), g.check(t(100)));
        assertEquals(t(101), g.check(t(101)));

        Guard h = Guard.withInitialToken(t(7));
        assertThrows(TokenStaleException.class, () -> h.check(t(6)));
        assertEquals(t(7), h.check(t(7)));
    }

    @Test
    void withInitialTokenRejectsValuesBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> Guard.withInitialToken(0));
        assertThrows(IllegalArgumentException.class, () -> Guard.withInitialToken(-5));
    }

    @Test
    void toStringShowsTheMark() {
        assertEquals("Guard[highWater=0]", Guard.create().toString());
        assertEquals("Guard[highWater=42]", Guard.withInitialToken(42).toString());
    }
}

package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.TokenStaleException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** One mark per key: tokens of one lock never reject the owner of another. */
class KeyedGuardTest {

    @Test
    void ownersOfTwoLocksInterleaveAndTheirZombiesAreRejected() {
        KeyedGuard g = KeyedGuard.create();
        g.forKey("a").check(t(10));
        g.forKey("b").check(t(11));
        g.forKey("a").check(t(10)); // A still holds lock a: a token of lock b says nothing about it
        g.forKey("a").check(t(12)); // a new owner of a
        g.forKey("b").check(t(11));
        assertThrows(TokenStaleException.class, () -> g.forKey("a").check(t(10)), "a's zombie");
        g.forKey("b").check(t(13));
        assertThrows(TokenStaleException.class, () -> g.forKey("b").check(t(11)), "b's zombie");
        assertEquals(2, g.size());
    }

    @Test
    void eachKeyHasOneGuardWithTheBuildersSettings() throws Exception {
        KeyedGuard g = Guard.builder()
                .initialToken(t(100))
                .drainTimeout(Duration.ofMillis(50))
                .buildKeyed();
        assertSame(g.forKey("x"), g.forKey("x"));
        assertEquals(Duration.ofMillis(50), g.forKey("x").drainTimeout());
        assertThrows(TokenStaleException.class, () -> g.forKey("y").check(t(99)));
        try (Guard.Admission a = g.forKey("x").admit(t(100))) {
            g.forKey("y").admit(t(101)).close(); // another key does not wait for x's action
            assertThrows(DrainTimeoutException.class, () -> g.forKey("x").admit(t(101)));
        }
    }

    @Test
    void blankKeysAreRejected() {
        KeyedGuard g = KeyedGuard.create();
        assertEquals(
                "key",
                assertThrows(NullPointerException.class, () -> g.forKey(null)).getMessage());
        for (String bad : new String[] {"", "  "}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> g.forKey(bad));
            assertTrue(e.getMessage().contains("resource key"), e.getMessage());
        }
        assertEquals(0, g.size());
    }
}

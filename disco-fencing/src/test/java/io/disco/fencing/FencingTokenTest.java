package io.disco.fencing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FencingTokenTest {

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("", "fencing token is empty"),
                Arguments.of("-1", "fencing token has a sign '-' at index 0"),
                Arguments.of("-0", "fencing token has a sign '-' at index 0"),
                Arguments.of("+5", "fencing token has a sign '+' at index 0"),
                Arguments.of("0", "fencing token must be at least 1, got 0"),
                Arguments.of("00", "fencing token has a leading zero: write it without one"),
                Arguments.of("007", "fencing token has a leading zero: write it without one"),
                Arguments.of(" 5", "fencing token has whitespace at index 0"),
                Arguments.of("5 ", "fencing token has whitespace at index 1"),
                Arguments.of("5 6", "fencing token has whitespace at index 1"),
                Arguments.of("\t5", "fencing token has whitespace at index 0"),
                Arguments.of("5\t", "fencing token has whitespace at index 1"),
                Arguments.of("5\n", "fencing token has whitespace at index 1"),
                Arguments.of("5\u00a0", "fencing token has whitespace at index 1"),
                Arguments.of("0x10", "fencing token has an invalid character 'x' at index 1"),
                Arguments.of("\uff11\uff12", "fencing token has a non-ASCII digit U+FF11 at index 0"),
                Arguments.of("\u0663", "fencing token has a non-ASCII digit U+0663 at index 0"),
                Arguments.of("1\ud835\udfce", "fencing token has a non-ASCII digit U+1D7CE at index 1"),
                Arguments.of("9223372036854775808", "fencing token overflows 9223372036854775807"),
                Arguments.of("18446744073709551616", "fencing token overflows 9223372036854775807"),
                Arguments.of("1e3", "fencing token has an invalid character 'e' at index 1"),
                Arguments.of("1.0", "fencing token has an invalid character '.' at index 1"),
                Arguments.of("1,2", "fencing token has an invalid character ',' at index 1"),
                Arguments.of("1_000", "fencing token has an invalid character '_' at index 1"),
                Arguments.of("abc", "fencing token has an invalid character 'a' at index 0"),
                Arguments.of("5\u0000", "fencing token has an invalid character U+0000 at index 1"),
                // syntax is checked before the value: an overlong number with junk names the junk
                Arguments.of("99999999999999999999x", "fencing token has an invalid character 'x' at index 20"));
    }

    @ParameterizedTest
    @MethodSource("malformed")
    void parseRejectsMalformedTextNamingTheProblem(String text, String message) {
        MalformedTokenException e = assertThrows(MalformedTokenException.class, () -> FencingToken.parse(text));
        assertEquals(
                message + (message.contains(" at index ") ? ": a fencing token is a plain decimal number" : ""),
                e.getMessage());
    }

    @Test
    void parseRejectsNullAsMissing() {
        assertEquals(
                "fencing token is missing",
                assertThrows(MalformedTokenException.class, () -> FencingToken.parse(null))
                        .getMessage());
    }

    @Test
    void parseAcceptsTheWholeRange() {
        assertEquals(1, FencingToken.parse("1").value());
        assertEquals(10, FencingToken.parse("10").value());
        assertEquals(Long.MAX_VALUE, FencingToken.parse("9223372036854775807").value());
        assertEquals(
                Long.MAX_VALUE - 1,
                FencingToken.parse(new StringBuilder("9223372036854775806")).value());
    }

    @Test
    void toStringRoundTripsThroughParse() {
        for (long v : new long[] {1, 9, 10, 34, 51, 1_000_000_007L, Long.MAX_VALUE}) {
            FencingToken t = FencingToken.of(v);
            assertEquals(t, FencingToken.parse(t.toString()));
        }
    }

    @Test
    void ofRejectsValuesBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> FencingToken.of(0));
        assertThrows(IllegalArgumentException.class, () -> FencingToken.of(-1));
        assertThrows(IllegalArgumentException.class, () -> FencingToken.of(Long.MIN_VALUE));
    }

    @Test
    void orderingAndEquality() {
        FencingToken a = FencingToken.of(34);
        FencingToken b = FencingToken.of(51);
        assertTrue(b.isNewerThan(a));
        assertFalse(a.isNewerThan(b));
        assertFalse(a.isNewerThan(FencingToken.of(34)));
        assertTrue(a.compareTo(b) < 0);
        assertEquals(0, a.compareTo(FencingToken.of(34)));
        assertEquals(a, FencingToken.of(34));
        assertEquals(a.hashCode(), FencingToken.of(34).hashCode());
    }
}

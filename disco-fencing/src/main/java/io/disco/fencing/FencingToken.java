package io.disco.fencing;

/**
 * A fencing token: a strictly positive 64-bit integer handed to the current owner of a lock,
 * read/write lock phase or leadership term.
 *
 * <p>Tokens are totally ordered. A later owner of the same resource always holds a strictly
 * greater token than every earlier owner (readers admitted in the same read phase share one
 * token). A guarded resource therefore rejects any request whose token is lower than the highest
 * it has already accepted: that request comes from a stale owner (a "zombie").
 *
 * <p>The valid range is {@code 1 .. Long.MAX_VALUE}. The textual form is the plain decimal number,
 * as produced by {@link #toString()} and accepted by {@link #parse(CharSequence)}.
 *
 * <p>Instances are immutable and thread-safe; equality is by value.
 */
public final class FencingToken implements Comparable<FencingToken> {

    private final long value;

    private FencingToken(long value) {
        this.value = value;
    }

    /**
     * Returns the token with the given value.
     *
     * @param value the token value, at least 1
     * @return the token
     * @throws IllegalArgumentException if {@code value < 1}
     */
    public static FencingToken of(long value) {
        if (value < 1) {
            throw new IllegalArgumentException("fencing token must be in 1..9223372036854775807, got " + value);
        }
        return new FencingToken(value);
    }

    /**
     * Parses the decimal text form of a token, strictly.
     *
     * <p>Only a non-empty run of ASCII digits {@code 0-9} whose value lies in
     * {@code 1 .. 9223372036854775807} is accepted. Everything else is rejected with a
     * {@link MalformedTokenException} whose message names the problem: {@code null} or empty text,
     * a sign ({@code +}/{@code -}), whitespace anywhere, a hex prefix, non-ASCII digits (such as
     * full-width {@code １２}), a value of zero, or a value that overflows a signed 64-bit integer.
     *
     * @param text the text to parse
     * @return the token
     * @throws MalformedTokenException if the text is not a valid token
     */
    public static FencingToken parse(CharSequence text) {
        if (text == null) {
            throw new MalformedTokenException("fencing token is missing");
        }
        int n = text.length();
        if (n == 0) {
            throw new MalformedTokenException("fencing token is empty");
        }
        long v = 0;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new MalformedTokenException(describe(c, i) + ": a fencing token is a plain decimal number");
            }
            int d = c - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                throw new MalformedTokenException("fencing token overflows 9223372036854775807");
            }
            v = v * 10 + d;
        }
        if (v == 0) {
            throw new MalformedTokenException("fencing token must be at least 1, got 0");
        }
        return new FencingToken(v);
    }

    private static String describe(char c, int index) {
        if (c == '+' || c == '-') {
            return "fencing token has a sign '" + c + "' at index " + index;
        }
        if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
            return "fencing token has whitespace at index " + index;
        }
        if (Character.isDigit(c)) {
            return "fencing token has a non-ASCII digit U+" + String.format("%04X", (int) c) + " at index " + index;
        }
        if (c >= 0x20 && c < 0x7f) {
            return "fencing token has an invalid character '" + c + "' at index " + index;
        }
        return "fencing token has an invalid character U+" + String.format("%04X", (int) c) + " at index " + index;
    }

    /**
     * The token's numeric value, at least 1.
     *
     * @return the value
     */
    public long value() {
        return value;
    }

    /**
     * Whether this token is strictly newer (greater) than {@code other}.
     *
     * @param other the token to compare with
     * @return {@code true} if {@code this > other}
     */
    public boolean isNewerThan(FencingToken other) {
        return value > other.value;
    }

    @Override
    public int compareTo(FencingToken other) {
        return Long.compare(value, other.value);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FencingToken && ((FencingToken) o).value == value;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(value);
    }

    /** The decimal form, exactly what {@link #parse(CharSequence)} accepts. */
    @Override
    public String toString() {
        return Long.toString(value);
    }
}

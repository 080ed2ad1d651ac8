package io.disco.fencing;

import java.util.Collections;
import java.util.Iterator;

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
     * Parses the canonical decimal text form of a token, strictly.
     *
     * <p>Accepted is exactly the text {@link #toString()} produces: a non-empty run of ASCII digits
     * {@code 0-9}, without leading zeros, whose value lies in {@code 1 .. 9223372036854775807}.
     * Every other text is rejected with a {@link MalformedTokenException} whose message names the
     * first problem found, checked in this order:
     * <ol>
     *   <li>{@code null} ("missing") or empty text;</li>
     *   <li>any character that is not an ASCII digit, reported with its index: a sign
     *       ({@code +}/{@code -}), whitespace anywhere (including tabs and leading or trailing
     *       spaces: nothing is trimmed), a non-ASCII digit (such as full-width {@code １２} or
     *       Arabic-Indic {@code ٣}), or any other character ({@code x}, {@code e}, {@code .},
     *       {@code _}, {@code ,} ...);</li>
     *   <li>a leading zero ({@code "007"}, {@code "00"}): a token has exactly one text form, so
     *       that two texts never denote the same token;</li>
     *   <li>the value zero ({@code "0"});</li>
     *   <li>a value above {@code 9223372036854775807} (it overflows a signed 64-bit integer).</li>
     * </ol>
     *
     * <p>The message never repeats the input except for one printable ASCII character, so it is
     * safe to log and to return to the client.
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
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new MalformedTokenException(
                        describe(Character.codePointAt(text, i), i) + ": a fencing token is a plain decimal number");
            }
        }
        if (text.charAt(0) == '0') {
            throw new MalformedTokenException(
                    n == 1
                            ? "fencing token must be at least 1, got 0"
                            : "fencing token has a leading zero: write it without one");
        }
        long v = 0;
        for (int i = 0; i < n; i++) {
            int d = text.charAt(i) - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                throw new MalformedTokenException("fencing token overflows 9223372036854775807");
            }
            v = v * 10 + d;
        }
        return new FencingToken(v);
    }

    /**
     * Parses a transport's values of the token field, of which there must be exactly one: the one
     * place where {@link FencingHttp} and {@link FencingGrpc} (and through them the server-side
     * guards) turn received values into a token.
     *
     * @param values the received values in order; {@code null} or empty when the field is absent
     * @param field how the field is named to the peer, e.g. {@code "X-Fencing-Token header"}
     * @return the token
     * @throws MalformedTokenException if the field is missing, repeated, or its value is malformed
     */
    static FencingToken parseSingle(Iterable<String> values, String field) {
        Iterator<String> it = values == null ? Collections.emptyIterator() : values.iterator();
        if (!it.hasNext()) {
            throw new MalformedTokenException("missing " + field);
        }
        String value = it.next();
        if (it.hasNext()) {
            throw new MalformedTokenException("repeated " + field + ": send exactly one fencing token");
        }
        return parse(value);
    }

    private static String describe(int codePoint, int index) {
        String at = " at index " + index;
        if (codePoint == '+' || codePoint == '-') {
            return "fencing token has a sign '" + (char) codePoint + "'" + at;
        }
        if (Character.isWhitespace(codePoint) || Character.isSpaceChar(codePoint)) {
            return "fencing token has whitespace" + at;
        }
        String name = codePoint >= 0x20 && codePoint < 0x7f
                ? "'" + (char) codePoint + "'"
                : String.format("U+%04X", codePoint);
        if (Character.isDigit(codePoint)) {
            return "fencing token has a non-ASCII digit " + name + at;
        }
        return "fencing token has an invalid character " + name + at;
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

package io.disco.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The few lines of JSON a claim's key carries (see {@link ClaimMetadata}): one flat object of string
 * and number fields, written and read without a JSON library. For providers.
 *
 * <p>Writing escapes what JSON requires ({@code "}, {@code \}, control characters). Reading is
 * lenient about what it does not need (unknown fields, nested objects and arrays, {@code true},
 * {@code false} and {@code null} are skipped) and strict about the syntax: anything that is not one
 * complete JSON object reads as empty. It never throws on its input.
 */
final class FlatJson {

    private final StringBuilder out = new StringBuilder(160).append('{');

    private FlatJson() {}

    /** @return a new writer of one object */
    public static FlatJson object() {
        return new FlatJson();
    }

    /**
     * @param name the field's name
     * @param value the field's value, written as a JSON string (null writes an empty string)
     * @return this writer
     */
    public FlatJson field(String name, String value) {
        name(name);
        quote(value == null ? "" : value);
        return this;
    }

    /**
     * @param name the field's name
     * @param value the field's value, written as a JSON number
     * @return this writer
     */
    public FlatJson field(String name, long value) {
        name(name);
        out.append(value);
        return this;
    }

    /** @return the object's text */
    public String end() {
        return out.toString() + '}';
    }

    private void name(String name) {
        if (out.length() > 1) {
            out.append(',');
        }
        quote(name);
        out.append(':');
    }

    private void quote(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /**
     * Reads the string and number fields of one JSON object.
     *
     * @param text the text, possibly null
     * @return the fields in order (a string as {@link String}, a number as {@link Long} when it is an
     *     integer that fits, else as {@link Double}); empty if {@code text} is not one complete JSON object
     */
    public static Optional<Map<String, Object>> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        try {
            Reader r = new Reader(text);
            Map<String, Object> fields = r.object(0);
            r.skipSpace();
            return r.pos == text.length() ? Optional.of(fields) : Optional.empty();
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return Optional.empty();
        }
    }

    /** A recursive-descent reader; any syntax error is an IllegalArgumentException, turned into "empty" above. */
    private static final class Reader {
        private static final int MAX_DEPTH = 32;
        private final String s;
        private int pos;

        Reader(String s) {
            this.s = s;
        }

        Map<String, Object> object(int depth) {
            if (depth > MAX_DEPTH) {
                throw new IllegalArgumentException("too deep");
            }
            skipSpace();
            expect('{');
            Map<String, Object> fields = new LinkedHashMap<>();
            skipSpace();
            if (peek() == '}') {
                pos++;
                return fields;
            }
            while (true) {
                skipSpace();
                String name = string();
                skipSpace();
                expect(':');
                Object value = value(depth);
                if (value != null) {
                    fields.put(name, value);
                }
                skipSpace();
                char c = s.charAt(pos++);
                if (c == '}') {
                    return fields;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected , or }");
                }
            }
        }

        /** @return a string or a number; null for what is skipped */
        private Object value(int depth) {
            skipSpace();
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (c == '{') {
                object(depth + 1);
                return null;
            }
            if (c == '[') {
                array(depth + 1);
                return null;
            }
            if (c == '-' || (c >= '0' && c <= '9')) {
                return number();
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (s.startsWith(word, pos)) {
                    pos += word.length();
                    return null;
                }
            }
            throw new IllegalArgumentException("unexpected " + c);
        }

        private void array(int depth) {
            if (depth > MAX_DEPTH) {
                throw new IllegalArgumentException("too deep");
            }
            expect('[');
            skipSpace();
            if (peek() == ']') {
                pos++;
                return;
            }
            while (true) {
                value(depth);
                skipSpace();
                char c = s.charAt(pos++);
                if (c == ']') {
                    return;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected , or ]");
                }
            }
        }

        private Object number() {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            while (pos < s.length() && "0123456789.eE+-".indexOf(s.charAt(pos)) >= 0) {
                pos++;
            }
            String n = s.substring(start, pos);
            try {
                return Long.parseLong(n);
            } catch (NumberFormatException notLong) {
                try {
                    return Double.parseDouble(n);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bad number " + n);
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(pos++);
                if (c == '"') {
                    return b.toString();
                }
                if (c < 0x20) {
                    throw new IllegalArgumentException("control character in a string");
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case '"':
                        b.append('"');
                        break;
                    case '\\':
                        b.append('\\');
                        break;
                    case '/':
                        b.append('/');
                        break;
                    case 'b':
                        b.append('\b');
                        break;
                    case 'f':
                        b.append('\f');
                        break;
                    case 'n':
                        b.append('\n');
                        break;
                    case 'r':
                        b.append('\r');
                        break;
                    case 't':
                        b.append('\t');
                        break;
                    case 'u':
                        b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        pos += 4;
                        break;
                    default:
                        throw new IllegalArgumentException("bad escape \\" + e);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(pos) != c) {
                throw new IllegalArgumentException("expected " + c);
            }
            pos++;
        }

        private char peek() {
            return s.charAt(pos);
        }

        void skipSpace() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }
    }
}

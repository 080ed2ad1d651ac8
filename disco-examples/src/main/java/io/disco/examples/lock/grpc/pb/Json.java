package io.disco.examples.lock.grpc.pb;

import io.disco.examples.JsonText;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A minimal JSON codec for flat objects of strings and integers: all the example's messages need,
 * without a JSON library or protoc.
 */
final class Json {

    private Json() {}

    static <T> MethodDescriptor.Marshaller<T> marshaller(
            Function<T, String> encode, Function<Map<String, Object>, T> decode) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(T value) {
                return new ByteArrayInputStream(encode.apply(value).getBytes(StandardCharsets.UTF_8));
            }

            @Override
            public T parse(InputStream stream) {
                try {
                    return decode.apply(Json.parse(new String(stream.readAllBytes(), StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    /** Encodes alternating names and values (String or Number). */
    static String object(Object... namesAndValues) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < namesAndValues.length; i += 2) {
            if (i > 0) {
                b.append(',');
            }
            quote(b, (String) namesAndValues[i]);
            b.append(':');
            Object v = namesAndValues[i + 1];
            if (v instanceof Number) {
                b.append(((Number) v).longValue());
            } else if (v == null) {
                b.append("null");
            } else {
                quote(b, v.toString());
            }
        }
        return b.append('}').toString();
    }

    static String string(Map<String, Object> m, String name) {
        Object v = m.get(name);
        return v == null ? null : v.toString();
    }

    static long number(Map<String, Object> m, String name) {
        Object v = m.get(name);
        if (!(v instanceof Long)) {
            throw new IllegalArgumentException("JSON field " + name + " is not an integer: " + v);
        }
        return (Long) v;
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"').append(JsonText.escape(s)).append('"');
    }

    /** Parses one flat JSON object whose values are strings, integers or null. */
    static Map<String, Object> parse(String text) {
        Parser p = new Parser(text);
        Map<String, Object> m = new LinkedHashMap<>();
        p.skip();
        p.expect('{');
        p.skip();
        if (p.peek() == '}') {
            p.pos++;
            return m;
        }
        while (true) {
            p.skip();
            String name = p.string();
            p.skip();
            p.expect(':');
            p.skip();
            m.put(name, p.value());
            p.skip();
            char c = p.next();
            if (c == '}') {
                return m;
            }
            if (c != ',') {
                throw p.error("',' or '}'");
            }
        }
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        char peek() {
            if (pos >= s.length()) {
                throw error("more input");
            }
            return s.charAt(pos);
        }

        char next() {
            char c = peek();
            pos++;
            return c;
        }

        void skip() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        void expect(char c) {
            if (next() != c) {
                throw error("'" + c + "'");
            }
        }

        Object value() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (s.startsWith("null", pos)) {
                pos += 4;
                return null;
            }
            int start = pos;
            if (c == '-') {
                pos++;
            }
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                pos++;
            }
            try {
                return Long.parseLong(s.substring(start, pos));
            } catch (NumberFormatException e) {
                throw error("a string, an integer or null");
            }
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = next();
                    switch (e) {
                        case 'u':
                            if (pos + 4 > s.length()) {
                                throw error("4 hex digits");
                            }
                            b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                            pos += 4;
                            break;
                        case 'n':
                            b.append('\n');
                            break;
                        case 't':
                            b.append('\t');
                            break;
                        case 'r':
                            b.append('\r');
                            break;
                        case 'b':
                            b.append('\b');
                            break;
                        case 'f':
                            b.append('\f');
                            break;
                        default:
                            b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        IllegalArgumentException error(String expected) {
            return new IllegalArgumentException("malformed JSON at " + pos + ", expected " + expected + ": " + s);
        }
    }
}

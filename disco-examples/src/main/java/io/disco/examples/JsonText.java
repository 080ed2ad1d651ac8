package io.disco.examples;

/** The examples' one rule for writing a JSON string: {@code "} and {@code \} escaped, control characters as {@code \}{@code uXXXX}. */
public final class JsonText {

    private JsonText() {}

    /**
     * @param s the text
     * @return {@code s} escaped for the inside of a JSON string (without the quotes)
     */
    public static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}

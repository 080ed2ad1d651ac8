package io.disco.client;

import java.util.Objects;

/**
 * The one rule for the name of a primitive (a lock, read/write lock, semaphore or election), the same on every
 * backend: the client ({@link Disco}) checks it up front, and so do the backends' own services (for etcd:
 * {@code EtcdSession.newLock(name)} and the others; for ZooKeeper: {@code ZooKeeperSession.newLock(path)} and the
 * others), with the same message. A name is an absolute path of segments, such as {@code /locks/orders}:
 *
 * <ul>
 *   <li>not null ({@link NullPointerException}), not blank, starting with {@code '/'}, and naming something
 *       below the root: not {@code "/"} itself;</li>
 *   <li>not ending in {@code '/'}: the keys of a name lie under {@code name + "/"} (as with etcd's Go recipes and
 *       {@code etcdctl lock}), so {@code /x/} would be another lock than {@code /x}, one with keys under
 *       {@code /x//}; the name is refused rather than guessed at;</li>
 *   <li>no empty segment ({@code //}) and no {@code .} or {@code ..} segment: names are not resolved, so
 *       {@code /a/../b} would be another lock than {@code /b} on one backend and refused by another;</li>
 *   <li>no character a backend cannot store as a path: no control character (U+0000 to U+001F, U+007F to
 *       U+009F), no character outside the Basic Multilingual Plane (a surrogate, U+D800 to U+DFFF), no
 *       private-use character (U+E000 to U+F8FF), none of U+FFF0 to U+FFFF;</li>
 *   <li>not {@code /zookeeper} or below it, the tree ZooKeeper reserves for itself.</li>
 * </ul>
 *
 * Anything else is allowed: spaces, dots inside a segment ({@code /jobs/v1.2}, {@code /a/...}), letters of any
 * script, {@code :} and {@code @}. A name made from outside input (an order id, a Spring Integration lock key, a
 * ShedLock name) becomes one safe segment with {@link #segment(String)}.
 */
public final class Names {

    private Names() {}

    /**
     * Checks {@code name} against the rule.
     *
     * @param name a primitive's name
     * @return {@code name}, unchanged
     * @throws NullPointerException if {@code name} is null (the message is {@code "name"})
     * @throws IllegalArgumentException if {@code name} breaks the rule; the message starts with {@code "name "} and
     *     says which part of the rule, and how to fix it where there is one way
     */
    public static String check(String name) {
        return check(name, "name");
    }

    /**
     * Checks {@code name} against the rule, naming it {@code parameter} in the messages: for a setting that is a
     * name's beginning, such as ShedLock's {@code prefix}. The messages are those of {@link #check(String)} with
     * that word first.
     *
     * @param name a primitive's name
     * @param parameter what the caller calls it, for the messages
     * @return {@code name}, unchanged
     * @throws NullPointerException if {@code name} is null (the message is {@code parameter})
     * @throws IllegalArgumentException if {@code name} breaks the rule; the message starts with {@code parameter}
     */
    public static String check(String name, String parameter) {
        Objects.requireNonNull(parameter, "parameter");
        try {
            return checked(name);
        } catch (NullPointerException e) {
            throw new NullPointerException(parameter);
        } catch (IllegalArgumentException e) {
            throw parameter.equals("name")
                    ? e
                    : new IllegalArgumentException(parameter + e.getMessage().substring("name".length()));
        }
    }

    private static String checked(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank, got '" + printable(name) + "'");
        }
        if (name.charAt(0) != '/') {
            throw new IllegalArgumentException(
                    "name must be an absolute path starting with '/', such as '/locks/orders'," + " got '"
                            + printable(name) + "'");
        }
        if (name.length() == 1) {
            throw new IllegalArgumentException(
                    "name must name something below the root, such as '/locks/orders', got '/'");
        }
        if (name.endsWith("/")) {
            String trimmed = name.replaceAll("/+$", "");
            throw new IllegalArgumentException(
                    "name must not end in '/', got '" + printable(name) + "': the keys of a name lie"
                            + " under name + '/' (as with etcd's Go recipes and etcdctl), so '" + printable(name)
                            + "' would be another lock"
                            + " than '" + printable(trimmed) + "', with keys under '" + printable(name) + "/'"
                            + (trimmed.isEmpty() ? "" : "; use '" + printable(trimmed) + "'"));
        }
        int segmentStart = 1;
        for (int i = 1; i <= name.length(); i++) {
            if (i < name.length() && name.charAt(i) != '/') {
                char c = name.charAt(i);
                if (refused(c)) {
                    throw new IllegalArgumentException("name must not contain " + String.format("U+%04X", (int) c)
                            + " (" + what(c) + "), got '" + printable(name) + "'");
                }
                continue;
            }
            String segment = name.substring(segmentStart, i);
            if (segment.isEmpty()) {
                throw new IllegalArgumentException(
                        "name must not have an empty segment ('//'), got '" + printable(name) + "'");
            }
            if (segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException(
                        "name must not have a '" + segment + "' segment (names are not resolved:"
                                + " it would name another lock on one backend and be refused by another), got '"
                                + printable(name) + "'");
            }
            segmentStart = i + 1;
        }
        if (name.equals("/zookeeper") || name.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("name must not be '/zookeeper' or below it, which ZooKeeper reserves for"
                    + " itself, got '" + printable(name) + "'");
        }
        return name;
    }

    /**
     * One segment of a name made from any text, for names built from outside input
     * ({@code "/locks/orders/" + Names.segment(orderKey)}): every character the rule refuses, {@code '/'} (so that
     * no segment nests another) and {@code '%'} (so that the result is unambiguous) are written {@code %XX}
     * (a character up to U+00FF) or {@code %uXXXX} (any other), and a segment that would be empty, {@code .} or
     * {@code ..} has its dots written {@code %2E} (the empty text is {@code %}). Different texts give different
     * segments, and a text with none of these characters is its own segment.
     *
     * @param text any text
     * @return a segment the rule allows: no {@code '/'}, never empty, {@code .} or {@code ..}
     * @throws NullPointerException if {@code text} is null
     */
    public static String segment(String text) {
        Objects.requireNonNull(text, "text");
        if (text.isEmpty()) {
            return "%";
        }
        if (text.equals(".") || text.equals("..")) {
            return text.replace(".", "%2E");
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean escape = c == '%' || c == '/' || refused(c);
            if (escape && out == null) {
                out = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (out != null) {
                if (!escape) {
                    out.append(c);
                } else if (c <= 0xFF) {
                    out.append(String.format("%%%02X", (int) c));
                } else {
                    out.append(String.format("%%u%04X", (int) c));
                }
            }
        }
        return out == null ? text : out.toString();
    }

    /** The characters no backend can store in a path (ZooKeeper refuses them; etcd would take them). */
    private static boolean refused(char c) {
        return c <= '\u001f' || c >= '\u007f' && c <= '\u009f' || c >= '\ud800' && c <= '\uf8ff' || c >= '\ufff0';
    }

    private static String what(char c) {
        if (c <= '\u001f' || c >= '\u007f' && c <= '\u009f') {
            return "a control character";
        }
        if (c <= '\udfff') {
            return "half of a character outside the Basic Multilingual Plane";
        }
        if (c <= '\uf8ff') {
            return "a private-use character";
        }
        return "a special or non-character";
    }

    /** {@code s} for a message: the refused characters written as {@code \\uXXXX}. */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(refused(c) ? String.format("\\u%04X", (int) c) : String.valueOf(c));
        }
        return b.toString();
    }
}

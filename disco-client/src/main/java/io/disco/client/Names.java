package io.disco.client;

import java.util.Objects;

/** The rules for a name given to the client. */
final class Names {

    private Names() {
    }

    /**
     * @return {@code name}, checked
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if blank, or ending in {@code '/'}
     */
    static String check(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank, got '" + name + "'");
        }
        if (name.endsWith("/")) {
            throw new IllegalArgumentException("name must not end in '/', got '" + name + "': the keys of a name lie under"
                    + " name + '/' (as with etcd's Go recipes and etcdctl), so '" + name + "' would be another lock than '"
                    + name.replaceAll("/+$", "") + "', with keys under '" + name + "/'; use '" + name.replaceAll("/+$", "") + "'");
        }
        return name;
    }
}

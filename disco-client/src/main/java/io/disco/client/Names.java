package io.disco.client;

/** The rules for a name given to the client. */
final class Names {

    private Names() {
    }

    /**
     * @return {@code name}, checked
     * @throws IllegalArgumentException if null, blank, or ending in {@code '/'}
     */
    static String check(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
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

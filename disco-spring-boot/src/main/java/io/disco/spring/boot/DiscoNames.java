package io.disco.spring.boot;

/** Checks of the disco names (prefixes, election names) given in properties. */
final class DiscoNames {

    private DiscoNames() {
    }

    /**
     * @param property the property's name, for the message
     * @param name its value
     * @throws IllegalArgumentException naming the property, if {@code name} is null, blank or ends in {@code '/'}
     */
    static void require(String property, String name) {
        if (name == null || name.isBlank() || name.endsWith("/")) {
            throw new IllegalArgumentException(property + " must be a disco name (not blank, not ending in '/'), got '"
                    + name + "'");
        }
    }
}

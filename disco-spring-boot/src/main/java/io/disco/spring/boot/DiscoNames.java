package io.disco.spring.boot;

import io.disco.client.Names;

/** Checks of the disco names (prefixes, election names) given in properties: the client's rule ({@link Names}). */
final class DiscoNames {

    private DiscoNames() {}

    /**
     * @param property the property's name, for the message
     * @param name its value
     * @throws IllegalArgumentException naming the property and the rule it breaks, if {@code name} is null or not a
     *     disco name
     */
    static void require(String property, String name) {
        if (name == null) {
            throw new IllegalArgumentException(
                    property + " must be a disco name, such as '/myapp/locks'; it is not set");
        }
        try {
            Names.check(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(property + " must be a disco name: " + e.getMessage(), e);
        }
    }
}

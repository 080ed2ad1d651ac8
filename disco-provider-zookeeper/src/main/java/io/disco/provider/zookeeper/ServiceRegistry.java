package io.disco.provider.zookeeper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The services of one session, by name, in the order they were made: at most one per name (one session is one
 * owner), each told when the session ends ({@link SessionMember}). It knows no kind of service: the services make
 * themselves ({@code ZkLockService.create} and its siblings) and register here through the session
 * ({@link SessionCore#register}). Thread-safe.
 */
final class ServiceRegistry {

    private final Map<String, SessionMember> members = new LinkedHashMap<>();

    /** @throws IllegalStateException if a service on {@code name} is registered */
    synchronized void checkFree(String name) {
        if (members.containsKey(name)) {
            throw new IllegalStateException(
                    "this session already has a service on " + name + ": use one session per concurrent owner");
        }
    }

    /**
     * Makes the service of {@code name} and registers it, unless one is registered.
     *
     * @throws IllegalStateException if a service on {@code name} is registered
     */
    synchronized <T extends SessionMember> T add(String name, Supplier<T> make) {
        checkFree(name);
        T member = make.get();
        members.put(name, member);
        return member;
    }

    synchronized void remove(String name, SessionMember member) {
        members.remove(name, member);
    }

    /** @return every service, in registration order */
    synchronized List<SessionMember> all() {
        return new ArrayList<>(members.values());
    }

    /** @return every service, in registration order, none of which is registered any more */
    synchronized List<SessionMember> drain() {
        List<SessionMember> all = new ArrayList<>(members.values());
        members.clear();
        return all;
    }
}

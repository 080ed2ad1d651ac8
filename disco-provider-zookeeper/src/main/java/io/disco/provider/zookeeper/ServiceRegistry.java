package io.disco.provider.zookeeper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The services of one session, by path, in the order they were made: at most one per path (one session is one
 * owner), each told when the session ends ({@link SessionMember}). It knows no kind of service: the services make
 * themselves ({@code ZkLockService.create} and its siblings) and register here through the session
 * ({@link SessionCore#register}). Thread-safe.
 */
final class ServiceRegistry {

    private final Map<String, SessionMember> members = new LinkedHashMap<>();

    /** @throws IllegalStateException if a service on {@code path} is registered */
    synchronized void checkFree(String path) {
        if (members.containsKey(path)) {
            throw new IllegalStateException(
                    "this session already has a service on " + path + ": use one session per concurrent owner");
        }
    }

    /**
     * Makes the service of {@code path} and registers it, unless one is registered.
     *
     * @throws IllegalStateException if a service on {@code path} is registered
     */
    synchronized <T extends SessionMember> T add(String path, Supplier<T> make) {
        checkFree(path);
        T member = make.get();
        members.put(path, member);
        return member;
    }

    synchronized void remove(String path, SessionMember member) {
        members.remove(path, member);
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

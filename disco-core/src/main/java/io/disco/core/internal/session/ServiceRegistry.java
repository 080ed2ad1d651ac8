package io.disco.core.internal.session;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The services of one session, in the order they were made: one per name (one session is one owner), except
 * semaphores, of which a session may have several on one name (each holds or waits for one permit, as several
 * holder keys on one etcd lease do: the client's semaphore takes as many permits on one owner as its threads ask
 * for); each told when the session ends ({@link SessionMember}). It knows no kind of service: the services make
 * themselves (a provider's lock service and its siblings) and register here through their session. Used by the
 * ZooKeeper and Redis providers. Thread-safe.
 */
public final class ServiceRegistry {

    /** Where a service is registered: its name, and whether it may share it with more of this session's. */
    private record Place(String name, boolean shared) {}

    /**
     * A lock, not a monitor: {@link #add} makes the service while it holds it (the check and the registration are one
     * step), and a service's making may wait (a virtual thread must not be pinned there).
     */
    private final ReentrantLock lock = new ReentrantLock();

    private final Map<SessionMember, Place> members = new LinkedHashMap<>();

    /**
     * @param name the service's name
     * @param shared whether the service may share {@code name} with other shared ones (semaphores)
     * @throws IllegalStateException if a service on {@code name} is registered that the new one cannot share it with
     */
    public void checkFree(String name, boolean shared) {
        lock.lock();
        try {
            for (Place p : members.values()) {
                if (p.name().equals(name) && !(shared && p.shared())) {
                    throw new IllegalStateException("this session already has a service on " + name
                            + ": use one session per concurrent owner (only a semaphore's permits share a session)");
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes the service of {@code name} and registers it, unless it cannot share the name (see {@link #checkFree}).
     *
     * @param <T> the service
     * @param name the service's name
     * @param shared whether it may share {@code name} with other shared ones
     * @param make makes it
     * @return the service made
     * @throws IllegalStateException if a service on {@code name} is registered that the new one cannot share it with
     */
    public <T extends SessionMember> T add(String name, boolean shared, Supplier<T> make) {
        lock.lock();
        try {
            checkFree(name, shared);
            T member = make.get();
            members.put(member, new Place(name, shared));
            return member;
        } finally {
            lock.unlock();
        }
    }

    /** @param member a service no longer registered */
    public void remove(SessionMember member) {
        lock.lock();
        try {
            members.remove(member);
        } finally {
            lock.unlock();
        }
    }

    /** @return every service, in registration order */
    public List<SessionMember> all() {
        lock.lock();
        try {
            return new ArrayList<>(members.keySet());
        } finally {
            lock.unlock();
        }
    }

    /** @return every service, in registration order, none of which is registered any more */
    public List<SessionMember> drain() {
        lock.lock();
        try {
            List<SessionMember> all = new ArrayList<>(members.keySet());
            members.clear();
            return all;
        } finally {
            lock.unlock();
        }
    }
}

package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.IntFunction;

/**
 * The services of one session, by the range their keys lie in ({@code name + "/"}), sorted: a
 * nested name is found among its neighbours and its parents, not by a scan of every service. No two
 * services of a session may have nested names (rule 8): they would share or queue behind each other's
 * keys, and one's release could delete the other's key. The one exception is a {@link HolderGroup}:
 * several services of one session may share a name when each holds its own key (the semaphore's
 * holders); they are one member here.
 *
 * <p>It knows no kind of service: every service registers itself ({@code EtcdLockService.create} and
 * its siblings) through its session ({@link SessionCore#register}, {@link SessionCore#joinHolders}),
 * and is told when the session ends ({@link SessionMember}). Its duties: refuse nested names, find the
 * service whose range holds a key (for the session's janitor, {@link LateCreates}), list the services
 * for the session's endings and log messages. Thread-safe.
 */
final class ServiceRegistry {

    private final ConcurrentSkipListMap<String, SessionMember> members = new ConcurrentSkipListMap<>();
    /** What the session is called in messages. */
    private final String session;
    /**
     * Serialises the joins and leaves of holders, so that a group is never dropped while one joins it.
     * A monitor, not a {@code ReentrantLock}: joins run under the lease's monitor ({@link LeaseKeeper#whileUsable}),
     * and the section neither blocks nor calls out, so nothing parks while a monitor is held.
     */
    private final Object holders = new Object();

    ServiceRegistry(String session) {
        this.session = session;
    }

    /**
     * Registers a service. Refused when its keys would fall inside another service's range on this
     * session, or the other's inside its own (one name equal to, or nested under, the other).
     * Registrations must not run concurrently (the session runs them under its lease's lock).
     *
     * @throws IllegalStateException if the names nest
     */
    void register(SessionMember member) {
        String range = member.name() + "/";
        Map.Entry<String, SessionMember> under =
                members.ceilingEntry(range); // the first range that may lie under this one
        SessionMember m = under != null && under.getKey().startsWith(range) ? under.getValue() : owning(range);
        if (m != null) {
            String other = m.name() + "/";
            throw new IllegalStateException(member.kind() + " '" + member.name() + "' and " + m.kind() + " '" + m.name()
                    + "' on session " + session + " would share keys: the keys of one lie under '"
                    + (range.length() >= other.length() ? other : range) + "', where the other queues;"
                    + " use one session per owner, or names that are not nested");
        }
        members.put(range, member);
    }

    void unregister(SessionMember member) {
        members.remove(member.name() + "/", member);
    }

    /**
     * Registers one more holder on {@code name}: the first makes the name's {@link HolderGroup}
     * (refused like {@link #register} when another kind uses the name or a nested one), later ones join
     * it with the lowest free holder index. Runs under the lease's lock, as {@link #register}.
     *
     * @param kind what the holders are called in messages ("semaphore")
     * @param make makes the holder of a holder index
     * @throws IllegalStateException if the name is used by another kind, or nests with a name in use
     */
    <H extends HolderGroup.Holder> H joinHolders(String name, String kind, IntFunction<H> make) {
        synchronized (holders) {
            SessionMember m = members.get(name + "/");
            HolderGroup group;
            if (m instanceof HolderGroup g && g.kind().equals(kind)) {
                group = g;
            } else {
                group = new HolderGroup(name, kind);
                register(group); // refused when the name is in use otherwise
            }
            int index = group.freeIndex();
            H holder = make.apply(index);
            group.add(index, holder);
            return holder;
        }
    }

    /** Unregisters a holder; the name's group goes with its last one. */
    void leaveHolders(HolderGroup.Holder holder) {
        synchronized (holders) {
            if (members.get(holder.name() + "/") instanceof HolderGroup g && g.remove(holder)) {
                members.remove(holder.name() + "/", g);
            }
        }
    }

    /** The service whose range holds {@code key}, or null (at most one: nested names are refused). */
    SessionMember owning(ByteSequence key) {
        return owning(key.toString(StandardCharsets.UTF_8));
    }

    /** The service whose range is {@code key} up to one of its slashes, or null; one lookup per slash. */
    private SessionMember owning(String key) {
        for (int i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) {
            SessionMember m = members.get(key.substring(0, i + 1));
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    /** Every service, in name order; a live view. */
    Collection<SessionMember> all() {
        return members.values();
    }

    /** The services, for log messages: "lock /a, election /b", the first ten of many, or "no service". */
    String describe() {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (SessionMember m : members.values()) {
            if (shown++ == 10) {
                return b.append(" and ")
                        .append(members.size() - 10)
                        .append(" more services")
                        .toString();
            }
            b.append(b.length() == 0 ? "" : ", ").append(m.kind()).append(' ').append(m.name());
        }
        return b.length() == 0 ? "no service" : b.toString();
    }
}

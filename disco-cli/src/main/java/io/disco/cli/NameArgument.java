package io.disco.cli;

import io.disco.client.Names;
import java.io.PrintWriter;
import org.apache.curator.utils.PathUtils;

/**
 * The NAME of {@code holders}, {@code break} and {@code watch}, checked before anything is read.
 *
 * <p>The tool reads names it did not make: {@code etcdctl lock jobs} and Go programs name theirs as they like
 * ({@code jobs}, without a leading '/'), and the tool must list and break those too. So it refuses only what can
 * never be a name's prefix as the operator means it, with exit code 2 and one line:
 * <ul>
 *   <li>a blank name (its keys would be every key under {@code /});</li>
 *   <li>a name ending in {@code '/'}: its keys would lie under {@code /x//}, never what {@code /x/} meant; the
 *       message says to use {@code /x};</li>
 *   <li>a control character (a paste error; no terminal types one).</li>
 * </ul>
 * Anything else the client's rule ({@link Names#check}) refuses (no leading {@code '/'}, {@code //}, {@code .} or
 * {@code ..} segments, ...) is read on etcd as etcdctl and Go read it, the keys under {@code NAME/}, after a
 * one-line note on stderr that this library's client would refuse the name. On ZooKeeper a name is a node's path,
 * which ZooKeeper holds to the same rule: a name the client refuses, or one Curator's path rule refuses, is a usage
 * error there. On Redis the keys of a name are {@code disco:{NAME}:...}, which only this library writes: a name the
 * client refuses is a usage error there too.
 */
final class NameArgument {

    private NameArgument() {}

    /** @return {@code name}, when the tool can use it on etcd; else a usage failure (exit 2) of one line */
    static String check(String name, PrintWriter err) {
        return check(name, err, Connection.Kind.ETCD);
    }

    /**
     * @param backend where the name is read: on ZooKeeper a path (the client's rule and ZooKeeper's are checked), on
     *     Redis a name this library makes (the client's rule), on etcd any name etcdctl and Go programs make
     * @return {@code name}, when the tool can use it; else a usage failure (exit 2) of one line
     */
    static String check(String name, PrintWriter err, Connection.Kind backend) {
        boolean zooKeeper = backend == Connection.Kind.ZOOKEEPER;
        if (name == null || name.isBlank()) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "NAME must not be blank, got '" + (name == null ? "" : name)
                            + "': name a lock, read/write lock, semaphore or election, such as /locks/orders");
        }
        if (name.endsWith("/")) {
            String trimmed = name.replaceAll("/+$", "");
            throw new CliFailure(
                    ExitCode.USAGE,
                    "NAME must not end in '/', got '" + name + "': "
                            + (zooKeeper
                                    ? "a ZooKeeper path does not"
                                    : "the keys of a name lie under NAME + '/', so this would read '" + name + "/'")
                            + (trimmed.isEmpty() ? "" : "; use '" + trimmed + "'"));
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= '\u001f' || c >= '\u007f' && c <= '\u009f') {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "NAME must not contain a control character (" + String.format("U+%04X", (int) c) + " at " + i
                                + "): check how it was pasted");
            }
        }
        if (zooKeeper) {
            try {
                Names.check(name);
                PathUtils.validatePath(name);
            } catch (IllegalArgumentException e) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "NAME '" + name + "' is not a ZooKeeper path this library uses: "
                                + e.getMessage().replaceFirst("^name ", "")
                                + " (give an absolute path such as /locks/orders)",
                        e);
            }
            return name;
        }
        if (backend == Connection.Kind.REDIS) {
            try {
                Names.check(name);
            } catch (IllegalArgumentException e) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "NAME '" + name + "' is not a name this library uses: "
                                + e.getMessage().replaceFirst("^name ", "")
                                + " (give a name such as /locks/orders; its keys are disco:{NAME}:...)",
                        e);
            }
            return name;
        }
        try {
            Names.check(name);
        } catch (IllegalArgumentException e) {
            err.println("disco: note: this library's client refuses "
                    + e.getMessage().replaceFirst("^name ", "this name: ")
                    + "; reading it as etcdctl and Go programs do, the keys under '" + name + "/'");
            err.flush();
        }
        return name;
    }
}

package io.disco.cli;

/**
 * The exit codes of {@code disco}, the same for every command (the usage text lists them).
 */
final class ExitCode {

    /** Done. */
    static final int OK = 0;
    /** The cluster (etcd or ZooKeeper) answered with an error (permission denied, authentication failed, ...). */
    static final int FAILED = 1;
    /** Bad arguments (picocli's own code for a usage error). */
    static final int USAGE = 2;
    /** Nothing holds or waits for the name, and no primitive can be found from its keys (ZooKeeper: nodes). */
    static final int NOTHING_HELD = 3;
    /**
     * No answer from the cluster in time: it is down, or the endpoints (ZooKeeper: the connect string), TLS or
     * credentials are wrong.
     */
    static final int UNREACHABLE = 4;
    /** {@code break} did not delete: not confirmed, or the holder changed before the delete. */
    static final int NOT_BROKEN = 5;

    /** The paragraph of the usage text that lists the codes. */
    static final String FOOTER =
            "Exit codes: 0 done; 1 etcd, ZooKeeper or Redis answered with an error; 2 bad arguments; 3 nothing holds or"
                    + " waits for the name; 4 no answer from the cluster within --command-timeout; 5 break deleted nothing (not"
                    + " confirmed, or the holder changed meanwhile).";

    private ExitCode() {}
}

package io.disco.cli;

import io.disco.core.Primitive;
import picocli.CommandLine.Option;

/** The {@code --primitive} option of {@code disco holders} and {@code disco break}: what NAME is, if not found from its keys. */
final class PrimitiveOption {

    @Option(
            names = "--primitive",
            paramLabel = "KIND",
            description = "lock, rwlock, semaphore or election (default: found from the keys or nodes present)")
    Primitive given;

    /** @return the primitive given, else the one {@code name}'s keys or nodes show ({@link Cluster#resolve}) */
    Primitive resolve(Cluster cluster, String name) {
        return cluster.resolve(name, given);
    }
}

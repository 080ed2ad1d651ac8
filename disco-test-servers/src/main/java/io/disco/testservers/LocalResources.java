package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What the local clusters (etcd, ZooKeeper) and networks take from the machine: loopback ports, a scratch
 * directory, and the shutdown hook that removes them when their owner forgot to.
 */
final class LocalResources {

    private LocalResources() {}

    /**
     * Removes {@code hook}, registered by a resource that is being closed, unless the hook itself is closing
     * it or the JVM is already exiting (then the hook runs, or ran, and finds the resource closed).
     */
    static void dropShutdownHook(Thread hook) {
        if (Thread.currentThread() == hook) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the JVM is exiting: the hook closes the resource again, which returns at once
        }
    }

    /** {@code /dev/shm} when it is writable, else {@code java.io.tmpdir}. */
    static Path scratchRoot() {
        Path shm = Paths.get("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir"));
    }

    /** A new directory under {@link #scratchRoot()} named {@code prefix...}. */
    static Path scratchDir(String prefix, String forWhat) {
        try {
            return Files.createTempDirectory(scratchRoot(), prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data dir for " + forWhat, e);
        }
    }

    /** Distinct free loopback ports: all sockets are held open until every port is chosen. */
    static int[] freePorts(int count, String forWhat) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find free loopback ports for " + forWhat, e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // the port is released either way
                }
            }
        }
    }

    /** How many times local servers are started on fresh ports when one was taken between picking and binding it. */
    static final int PORT_ATTEMPTS = 3;

    /**
     * One attempt at starting local servers on ports picked just before: the servers, not started yet, and whether
     * one of them found its port taken (asked after a failed start, before the servers are closed).
     */
    record PortAttempt<T>(T servers, BooleanSupplier portTaken) {}

    /**
     * Starts servers on free loopback ports, made anew by {@code attempt} for each try: a start that failed because
     * another process took a port meanwhile is tried again on fresh ports, {@value #PORT_ATTEMPTS} times at the most;
     * the servers of a failed start are closed, and any other failure, or the last, is thrown (with the close's
     * failure as suppressed, when the close failed too: then it is not tried again).
     *
     * @return the started servers
     */
    static <T> T startOnFreePorts(Supplier<PortAttempt<T>> attempt, Consumer<T> start, Consumer<T> close) {
        for (int n = 1; ; n++) {
            PortAttempt<T> a = attempt.get();
            try {
                start.accept(a.servers());
                return a.servers();
            } catch (RuntimeException e) {
                boolean portTaken = a.portTaken().getAsBoolean();
                try {
                    close.accept(a.servers());
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                    throw e;
                }
                if (!portTaken || n == PORT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /**
     * Starts {@code resource} with {@code start}; if the start fails, closes it with {@code close} (what the close
     * throws is added to the start's failure as suppressed) and throws the start's failure, so that a resource that
     * did not start leaves nothing behind.
     *
     * @return {@code resource}, started
     */
    static <T> T startedOrClosed(T resource, Runnable start, Runnable close) {
        try {
            start.run();
            return resource;
        } catch (RuntimeException e) {
            try {
                close.run();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /**
     * Runs one step of a close that goes on when a step fails: what {@code step} throws is added to {@code failure}
     * as suppressed.
     */
    static void closeStep(Runnable step, RuntimeException failure) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Closes what local members run in, when they run in a network of their own: the proxies in front of their peer
     * ports, then the network (its failure added to {@code failure}); either may be null.
     */
    static void closeNetwork(PeerLinks peerLinks, MemberNetwork network, RuntimeException failure) {
        if (peerLinks != null) {
            peerLinks.close();
        }
        if (network != null) {
            closeStep(network::close, failure);
        }
    }

    /** Deletes {@code dir} and everything below it; what fails is added to {@code failure} as suppressed. */
    static void deleteTree(Path dir, RuntimeException failure) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path path : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            failure.addSuppressed(e);
        }
    }
}

package io.disco.testing;

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
import java.util.stream.Stream;

/**
 * What the local clusters (etcd, ZooKeeper) and networks take from the machine: loopback ports, a scratch
 * directory, and the shutdown hook that removes them when their owner forgot to.
 */
final class LocalResources {

    private LocalResources() {
    }

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

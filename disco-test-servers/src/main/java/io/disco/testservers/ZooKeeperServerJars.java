package io.disco.testservers;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * What a {@link ZooKeeperEnsemble}'s member JVMs run on: the {@code java} of the current process, and the
 * ZooKeeper server jar and its dependencies from the current class path (so nothing needs to be installed).
 */
final class ZooKeeperServerJars {

    /** The class path entries a server needs, by the start of their file names. */
    private static final List<String> SERVER_JARS = List.of(
            "zookeeper",
            "audience-annotations",
            "netty-",
            "slf4j-",
            "logback-",
            "commons-io",
            "commons-cli",
            "metrics-core",
            "snappy-java",
            "jline",
            "spotbugs-annotations");

    private ZooKeeperServerJars() {}

    static Path java() {
        return ProcessHandle.current()
                .info()
                .command()
                .map(Paths::get)
                .orElseGet(() -> Paths.get(System.getProperty("java.home"), "bin", "java"));
    }

    /** The ZooKeeper server jar and its dependencies, from the current class path. */
    static String classPath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String file = Paths.get(entry).getFileName() == null
                    ? ""
                    : Paths.get(entry).getFileName().toString();
            if (file.endsWith(".jar") && SERVER_JARS.stream().anyMatch(file::startsWith)) {
                entries.add(entry);
            }
        }
        if (entries.stream()
                .noneMatch(e -> Paths.get(e).getFileName().toString().matches("zookeeper-\\d.*\\.jar"))) {
            throw new IllegalStateException(
                    "the ZooKeeper server jar (org.apache.zookeeper:zookeeper) is not on the class"
                            + " path: add it (curator-test brings it) to start a ZooKeeperEnsemble");
        }
        return String.join(File.pathSeparator, entries);
    }
}

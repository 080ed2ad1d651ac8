package io.disco.spring.boot;

import java.util.Map;

/**
 * jetcd 0.8.6 runs on Vert.x 5, which needs Netty 4.2. Spring Boot 3.5 manages Netty 4.1, and there the
 * first etcd request fails deep inside jetcd with {@code ClassNotFoundException:
 * io.netty.channel.MultiThreadIoEventLoopGroup}. This check fails at startup instead, naming the Netty
 * found and the fix.
 */
final class NettyCheck {

    /** A class that Netty 4.2 has and 4.1 lacks, which Vert.x 5 loads. */
    static final String NETTY_42_CLASS = "io.netty.channel.MultiThreadIoEventLoopGroup";

    private NettyCheck() {
    }

    static void requireNetty42(ClassLoader loader) {
        try {
            Class.forName(NETTY_42_CLASS, false, loader);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(message(found(loader)));
        }
    }

    static String message(String found) {
        return "disco needs Netty 4.2 (jetcd 0.8.6 runs on Vert.x 5), but the class path has Netty " + found
                + ", without " + NETTY_42_CLASS + ". Spring Boot 3.5 manages Netty 4.1. Fix: move to Spring Boot 4.0 or later,"
                + " or override Boot's Netty version: Maven <properties><netty.version>4.2.18.Final</netty.version></properties>,"
                + " Gradle ext['netty.version'] = '4.2.18.Final'";
    }

    private static String found(ClassLoader loader) {
        try {
            Class<?> version = Class.forName("io.netty.util.Version", true, loader);
            @SuppressWarnings("unchecked")
            Map<String, ?> all = (Map<String, ?>) version.getMethod("identify", ClassLoader.class).invoke(null, loader);
            Object common = all.get("netty-common");
            if (common == null && !all.isEmpty()) {
                common = all.values().iterator().next();
            }
            if (common != null) {
                return String.valueOf(common.getClass().getMethod("artifactVersion").invoke(common));
            }
        } catch (ReflectiveOperationException | LinkageError ignored) {
            // fall through
        }
        return "(version unknown: no io.netty.util.Version)";
    }
}

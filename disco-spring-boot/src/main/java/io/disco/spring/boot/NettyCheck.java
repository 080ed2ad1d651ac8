package io.disco.spring.boot;

import java.util.Map;

/**
 * jetcd 0.8.6 runs on Vert.x 5, which needs Netty 4.2. Spring Boot 3.5 manages Netty 4.1, and there the
 * first etcd request fails deep inside jetcd with {@code ClassNotFoundException:
 * io.netty.channel.MultiThreadIoEventLoopGroup}. This check fails at startup instead, naming the Netty
 * found and the fix. It also fails, naming the fix, on a Netty older than {@link #MIN_NETTY} (what Vert.x
 * 5.0.5, jetcd 0.8.6's, is built on) or a gRPC older than {@link #MIN_GRPC} (what jetcd 0.8.6 is built
 * on): disco-bom manages no third-party versions, so the application's (Boot's) are the ones in effect
 * (docs/compatibility.md).
 */
final class NettyCheck {

    /** A class that Netty 4.2 has and 4.1 lacks, which Vert.x 5 loads. */
    static final String NETTY_42_CLASS = "io.netty.channel.MultiThreadIoEventLoopGroup";

    /** The oldest Netty jetcd 0.8.6 runs on: the one its Vert.x (5.0.5) is built on. */
    static final String MIN_NETTY = "4.2.7.Final";

    /** The oldest gRPC jetcd 0.8.6 runs on: the one it is built on. */
    static final String MIN_GRPC = "1.76.0";

    private NettyCheck() {}

    static void requireNetty42(ClassLoader loader) {
        try {
            Class.forName(NETTY_42_CLASS, false, loader);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(message(found(loader)));
        }
        String netty = found(loader);
        if (older(netty, MIN_NETTY)) {
            throw new IllegalStateException(
                    "disco needs Netty " + MIN_NETTY + " or later (jetcd 0.8.6 runs on Vert.x 5.0.5,"
                            + " built on it), but the class path has Netty " + netty
                            + ". Fix: Spring Boot 4.0 or later manages a newer"
                            + " one; otherwise set it: Maven <properties><netty.version>" + MIN_NETTY
                            + "</netty.version></properties>"
                            + " (Boot's parent or BOM), or import io.netty:netty-bom " + MIN_NETTY
                            + " or later; Gradle ext['netty.version']");
        }
        String grpc = grpcVersion(loader);
        if (grpc != null && older(grpc, MIN_GRPC)) {
            throw new IllegalStateException(
                    "disco needs gRPC " + MIN_GRPC + " or later (the release jetcd 0.8.6 is built on),"
                            + " but the class path has gRPC " + grpc
                            + ". Fix: Spring Boot 4.1 manages a newer one; otherwise set it:"
                            + " Maven <properties><grpc-java.version>" + MIN_GRPC
                            + "</grpc-java.version></properties> (Boot 4.1's"
                            + " parent or BOM), or import io.grpc:grpc-bom " + MIN_GRPC
                            + " or later before whatever manages the older one");
        }
    }

    /** Whether {@code version} is older than {@code minimum}, by their leading numbers; false when it cannot tell. */
    static boolean older(String version, String minimum) {
        int[] v = numbers(version);
        int[] m = numbers(minimum);
        if (v.length == 0) {
            return false;
        }
        for (int i = 0; i < m.length; i++) {
            int a = i < v.length ? v[i] : 0;
            if (a != m[i]) {
                return a < m[i];
            }
        }
        return false;
    }

    private static int[] numbers(String version) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+)(?:\\.(\\d+))?(?:\\.(\\d+))?")
                .matcher(version);
        if (!m.find()) {
            return new int[0];
        }
        int n = m.group(3) != null ? 3 : m.group(2) != null ? 2 : 1;
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Integer.parseInt(m.group(i + 1));
        }
        return out;
    }

    /** gRPC's own version (grpc-core's {@code GrpcUtil.IMPLEMENTATION_VERSION}), or null without grpc-core. */
    private static String grpcVersion(ClassLoader loader) {
        try {
            Object v = Class.forName("io.grpc.internal.GrpcUtil", false, loader)
                    .getField("IMPLEMENTATION_VERSION")
                    .get(null);
            return v == null ? null : String.valueOf(v);
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return null;
        }
    }

    static String message(String found) {
        return "disco needs Netty 4.2 (jetcd 0.8.6 runs on Vert.x 5), but the class path has Netty " + found
                + ", without " + NETTY_42_CLASS
                + ". Spring Boot 3.5 manages Netty 4.1. Fix: move to Spring Boot 4.0 or later,"
                + " or override Boot's Netty version: Maven <properties><netty.version>4.2.18.Final</netty.version></properties>,"
                + " Gradle ext['netty.version'] = '4.2.18.Final'";
    }

    private static String found(ClassLoader loader) {
        try {
            Class<?> version = Class.forName("io.netty.util.Version", true, loader);
            @SuppressWarnings("unchecked")
            Map<String, ?> all = (Map<String, ?>)
                    version.getMethod("identify", ClassLoader.class).invoke(null, loader);
            Object common = all.get("netty-common");
            if (common == null && !all.isEmpty()) {
                common = all.values().iterator().next();
            }
            if (common != null) {
                return String.valueOf(
                        common.getClass().getMethod("artifactVersion").invoke(common));
            }
        } catch (ReflectiveOperationException | LinkageError ignored) {
            // fall through
        }
        return "(version unknown: no io.netty.util.Version)";
    }
}

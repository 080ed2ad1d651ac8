package io.disco.cli;

import io.disco.provider.etcd.EtcdClients;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.ClientBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.apache.curator.utils.PathUtils;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * How every command reaches its cluster: {@code --backend etcd} (the default) with the flags of {@code etcdctl}
 * ({@code --endpoints}, {@code --cacert}, {@code --cert}, {@code --key}, {@code --user}, {@code --password}), with
 * the same environment variables as defaults ({@code ETCDCTL_ENDPOINTS}, ...); or {@code --backend zookeeper} with
 * {@code --connect}, ZooKeeper's connect string; or {@code --backend redis} with {@code --redis-uri}, Lettuce's URI
 * ({@code redis://}, {@code rediss://}, {@code redis-sentinel://...#master}); {@code --command-timeout} for all. A flag
 * of another backend given on the command line (an environment variable is only a default, and is ignored) is a usage
 * error.
 */
final class Connection {

    /** The backends the tool reads. */
    enum Kind {
        ETCD,
        ZOOKEEPER,
        REDIS
    }

    /** The flags only etcd takes. */
    private static final List<String> ETCD_FLAGS =
            List.of("--endpoints", "--cacert", "--cert", "--key", "--user", "--password");

    @Option(
            names = "--backend",
            paramLabel = "etcd|zookeeper|redis",
            defaultValue = "etcd",
            description = "the cluster's kind: etcd (the default; --endpoints and etcdctl's flags), zookeeper"
                    + " (--connect) or redis (--redis-uri)")
    String backend;

    @Option(
            names = "--redis-uri",
            paramLabel = "URI",
            defaultValue = Redis.DEFAULT_URI,
            description =
                    "with --backend redis: the server, as Lettuce takes it: redis://[[user]:password@]host[:port],"
                            + " rediss://... (TLS, verified with the JVM's default trust store) or"
                            + " redis-sentinel://host:port[,host:port...]#master (default: ${DEFAULT-VALUE})")
    String redisUri;

    @Option(
            names = "--connect",
            paramLabel = "HOST:PORT[,HOST:PORT...][/CHROOT]",
            defaultValue = ZooKeeper.DEFAULT_CONNECT,
            description = "with --backend zookeeper: ZooKeeper's connect string, as zkCli.sh and Curator take it"
                    + " (default: ${DEFAULT-VALUE}); plaintext, without authentication")
    String connect;

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(
            names = "--endpoints",
            split = ",",
            paramLabel = "URL",
            defaultValue = "${env:ETCDCTL_ENDPOINTS:-127.0.0.1:2379}",
            description = "etcd endpoints, comma-separated (default: $ETCDCTL_ENDPOINTS, else 127.0.0.1:2379). "
                    + "Without a scheme: http://, or https:// when a TLS flag is given. All http:// (plaintext) or all "
                    + "https:// (always TLS: verified with --cacert, else the JVM's default trust store).")
    List<String> endpoints = new ArrayList<>();

    @Option(
            names = "--cacert",
            paramLabel = "FILE",
            defaultValue = "${env:ETCDCTL_CACERT}",
            description =
                    "verify the members' certificates with this CA bundle (PEM) instead of the JVM's default trust"
                            + " store; for https:// endpoints (makes endpoints without a scheme https://)")
    Path cacert;

    @Option(
            names = "--cert",
            paramLabel = "FILE",
            defaultValue = "${env:ETCDCTL_CERT}",
            description = "client certificate (PEM) for mutual TLS; needs --key")
    Path cert;

    @Option(
            names = "--key",
            paramLabel = "FILE",
            defaultValue = "${env:ETCDCTL_KEY}",
            description = "the client certificate's private key (PEM, PKCS#8)")
    Path key;

    @Option(
            names = "--user",
            paramLabel = "NAME[:PASSWORD]",
            defaultValue = "${env:ETCDCTL_USER}",
            description = "authenticate as this etcd user; the password after a colon, or with --password")
    String user;

    @Option(
            names = "--password",
            paramLabel = "PASSWORD",
            arity = "0..1",
            interactive = true,
            defaultValue = "${env:ETCDCTL_PASSWORD}",
            description = "the user's password; given without a value, it is asked for on the terminal")
    String password;

    @Option(
            names = {"--command-timeout", "--timeout"},
            paramLabel = "DURATION",
            defaultValue = "5s",
            converter = DurationConverter.class,
            description =
                    "how long to wait for each answer of etcd, ZooKeeper or Redis before giving up with exit code 4 "
                            + "(default: ${DEFAULT-VALUE}; 500ms, 5s, 1m or ISO-8601)")
    Duration timeout;

    private static final String NO_ENDPOINT = "--endpoints: no endpoint given; give host:port or http(s)://host:port,"
            + " comma-separated, such as 10.0.0.1:2379 (default: $ETCDCTL_ENDPOINTS, else 127.0.0.1:2379)";

    /**
     * Connects to the cluster {@code --backend} names, after checking the flags (a usage error, exit 2, for a flag of
     * another backend, an unknown backend or a malformed endpoint, connect string or URI).
     */
    Cluster open() {
        return switch (kind()) {
            case ZOOKEEPER -> openZooKeeper();
            case REDIS -> openRedis();
            case ETCD -> openEtcd();
        };
    }

    /** @return whether {@code --backend zookeeper} was given ({@link #kind}) */
    boolean zooKeeper() {
        return kind() == Kind.ZOOKEEPER;
    }

    /**
     * @return the backend {@code --backend} names; refuses an unknown backend and the other backends' flags (exit 2)
     */
    Kind kind() {
        String b = backend == null ? "" : backend.trim().toLowerCase(Locale.ROOT);
        Kind kind = switch (b) {
            case "etcd" -> Kind.ETCD;
            case "zookeeper" -> Kind.ZOOKEEPER;
            case "redis" -> Kind.REDIS;
            default ->
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--backend: '" + backend
                                + "' is not a backend the tool knows; give etcd (the default), zookeeper or"
                                + " redis");
        };
        var parsed = mixee == null ? null : mixee.commandLine().getParseResult();
        if (parsed == null) {
            return kind;
        }
        if (kind != Kind.ETCD) {
            for (String flag : ETCD_FLAGS) {
                if (parsed.hasMatchedOption(flag)) {
                    throw new CliFailure(
                            ExitCode.USAGE,
                            flag + " is a flag of etcd, not of "
                                    + (kind == Kind.ZOOKEEPER
                                            ? "ZooKeeper: with --backend zookeeper give --connect"
                                                    + " HOST:PORT[,HOST:PORT...][/CHROOT] (and --command-timeout)"
                                            : "Redis: with --backend redis give --redis-uri redis://host:port (the"
                                                    + " password in it, rediss:// for TLS; and --command-timeout)"));
                }
            }
        }
        if (kind != Kind.ZOOKEEPER && parsed.hasMatchedOption("--connect")) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "--connect is ZooKeeper's connect string: add --backend zookeeper"
                            + (kind == Kind.REDIS ? ", or give Redis's --redis-uri" : ", or give etcd's --endpoints"));
        }
        if (kind != Kind.REDIS && parsed.hasMatchedOption("--redis-uri")) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "--redis-uri names a Redis server: add --backend redis"
                            + (kind == Kind.ZOOKEEPER
                                    ? ", or give ZooKeeper's --connect"
                                    : ", or give etcd's --endpoints"));
        }
        return kind;
    }

    /** Connects to Redis within the command timeout ({@link Redis}), after checking the URI. */
    Redis openRedis() {
        return Redis.connect(Redis.parse(redisUri), timeout);
    }

    /** Connects to ZooKeeper within the command timeout ({@link ZooKeeper}), after checking the connect string. */
    ZooKeeper openZooKeeper() {
        return ZooKeeper.connect(checkConnect(connect), timeout);
    }

    /**
     * @return {@code connect}, trimmed, when ZooKeeper's client can parse it: servers {@code host[:port]} (an IPv6
     *     address in brackets), comma-separated, and an optional chroot path; else a usage failure (exit 2)
     */
    static String checkConnect(String connect) {
        String c = connect == null ? "" : connect.trim();
        String example = "give host:port[,host:port...][/chroot], such as 10.0.0.1:2181,10.0.0.2:2181/app";
        if (c.isEmpty()) {
            throw new CliFailure(ExitCode.USAGE, "--connect: no server given; " + example);
        }
        int slash = c.indexOf('/');
        String servers = slash < 0 ? c : c.substring(0, slash);
        if (slash >= 0 && c.length() > slash + 1) {
            String chroot = c.substring(slash);
            try {
                PathUtils.validatePath(chroot);
            } catch (IllegalArgumentException e) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--connect: the chroot '" + chroot + "' is not a ZooKeeper path (" + e.getMessage() + "); "
                                + example,
                        e);
            }
        }
        if (servers.isBlank()) {
            throw new CliFailure(ExitCode.USAGE, "--connect: '" + c + "' names no server; " + example);
        }
        for (String server : servers.split(",", -1)) {
            String s = server.trim();
            if (s.isEmpty()) {
                throw new CliFailure(ExitCode.USAGE, "--connect: '" + c + "' has an empty server; " + example);
            }
            String host = s;
            String port = null;
            if (s.startsWith("[")) {
                int close = s.indexOf(']');
                if (close < 0) {
                    throw new CliFailure(ExitCode.USAGE, "--connect: '" + s + "' opens '[' without ']'; " + example);
                }
                host = s.substring(1, close);
                String rest = s.substring(close + 1);
                if (!rest.isEmpty()) {
                    if (!rest.startsWith(":")) {
                        throw new CliFailure(ExitCode.USAGE, "--connect: '" + s + "' is not host:port; " + example);
                    }
                    port = rest.substring(1);
                }
            } else {
                int colon = s.lastIndexOf(':');
                if (colon >= 0) {
                    host = s.substring(0, colon);
                    port = s.substring(colon + 1);
                }
            }
            if (host.isBlank() || host.contains(":") && !s.startsWith("[")) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--connect: '" + s + "' names no host (an IPv6 address goes in brackets: [::1]:2181); "
                                + example);
            }
            if (port != null) {
                int p;
                try {
                    p = Integer.parseInt(port);
                } catch (NumberFormatException e) {
                    p = -1;
                }
                if (p < 1 || p > 65535) {
                    throw new CliFailure(
                            ExitCode.USAGE,
                            "--connect: the port of '" + s + "' is not a port number (1 to 65535); " + example);
                }
            }
        }
        return c;
    }

    /** Connects to etcd (lazily: jetcd connects on the first call, which {@link Etcd#await} bounds). */
    Etcd openEtcd() {
        if (endpoints.isEmpty()) {
            throw new CliFailure(ExitCode.USAGE, NO_ENDPOINT);
        }
        boolean tlsFlags = cacert != null || cert != null;
        if ((cert == null) != (key == null)) {
            throw new CliFailure(ExitCode.USAGE, "--cert and --key go together (a client certificate and its key)");
        }
        for (Path file : new Path[] {cacert, cert, key}) {
            if (file != null && !Files.isReadable(file)) {
                throw new CliFailure(ExitCode.USAGE, "cannot read " + file);
            }
        }
        List<String> urls = new ArrayList<>();
        for (String e : endpoints) {
            String trimmed = e.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            String url = trimmed.contains("://") ? trimmed : (tlsFlags ? "https://" : "http://") + trimmed;
            java.net.URI uri;
            try {
                uri = new java.net.URI(url);
            } catch (java.net.URISyntaxException ex) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--endpoints: '" + trimmed + "' is not an endpoint (" + ex.getReason()
                                + "); give host:port or http(s)://host:port",
                        ex);
            }
            if (uri.getHost() == null || uri.getHost().isEmpty()) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--endpoints: '" + trimmed + "' names no host (or its port is not a number);"
                                + " give host:port or http(s)://host:port, such as 10.0.0.1:2379");
            }
            urls.add(url);
        }
        if (urls.isEmpty()) {
            throw new CliFailure(ExitCode.USAGE, NO_ENDPOINT);
        }
        // The provider's one rule (EtcdClients): https:// is always TLS (with --cacert, else the JVM's default
        // trust store), http:// always plaintext; a mixed list, or TLS flags for http://, is a usage error.
        boolean https;
        try {
            https = EtcdClients.tls(urls);
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCode.USAGE, "--endpoints: " + e.getMessage(), e);
        }
        if (tlsFlags && !https) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "--cacert and --cert are TLS flags, but --endpoints are plaintext (" + String.join(", ", urls)
                            + "): use https:// endpoints for TLS, or drop the flags");
        }
        ClientBuilder b;
        try {
            b = EtcdClients.builder(
                    urls,
                    !tlsFlags
                            ? null
                            : ssl -> {
                                if (cacert != null) {
                                    ssl.trustManager(cacert.toFile());
                                }
                                if (cert != null) {
                                    ssl.keyManager(cert.toFile(), key.toFile());
                                }
                            });
        } catch (SSLException | RuntimeException e) {
            throw new CliFailure(ExitCode.USAGE, "cannot use the TLS files (" + e.getMessage() + ")", e);
        }
        if (user != null && !user.isEmpty()) {
            String name = user;
            String pw = password;
            int colon = user.indexOf(':');
            if (colon >= 0) {
                name = user.substring(0, colon);
                pw = user.substring(colon + 1);
            }
            if (pw == null) {
                throw new CliFailure(
                        ExitCode.USAGE, "--user " + name + ": no password (give --password, or --user NAME:PASSWORD)");
            }
            b.user(ByteSequence.from(name, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(pw, StandardCharsets.UTF_8));
        }
        return new Etcd(b.build(), urls, timeout);
    }

    /** Reads {@code 500ms}, {@code 5s}, {@code 2m} and ISO-8601 ({@code PT5S}). */
    static final class DurationConverter implements picocli.CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            String v = value.trim().toLowerCase(java.util.Locale.ROOT);
            Duration d;
            if (v.startsWith("pt")) {
                d = Duration.parse(v.toUpperCase(java.util.Locale.ROOT));
            } else if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
            } else if (v.endsWith("m")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)) * 60);
            } else {
                throw new picocli.CommandLine.TypeConversionException(
                        "'" + value + "' is not a duration (500ms, 5s, 1m)");
            }
            if (d.isZero() || d.isNegative()) {
                throw new picocli.CommandLine.TypeConversionException("'" + value + "': the timeout must be positive");
            }
            return d;
        }
    }
}

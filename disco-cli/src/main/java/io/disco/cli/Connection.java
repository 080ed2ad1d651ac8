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
import javax.net.ssl.SSLException;
import picocli.CommandLine.Option;

/**
 * How every command reaches etcd: the flags of {@code etcdctl} ({@code --endpoints}, {@code --cacert},
 * {@code --cert}, {@code --key}, {@code --user}, {@code --password}, {@code --command-timeout}), with
 * the same environment variables as defaults ({@code ETCDCTL_ENDPOINTS}, ...).
 */
final class Connection {

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
            description = "how long to wait for each answer of etcd before giving up with exit code 4 "
                    + "(default: ${DEFAULT-VALUE}; 500ms, 5s, 1m or ISO-8601)")
    Duration timeout;

    private static final String NO_ENDPOINT = "--endpoints: no endpoint given; give host:port or http(s)://host:port,"
            + " comma-separated, such as 10.0.0.1:2379 (default: $ETCDCTL_ENDPOINTS, else 127.0.0.1:2379)";

    /** Connects (lazily: jetcd connects on the first call, which {@link Etcd#await} bounds). */
    Etcd open() {
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

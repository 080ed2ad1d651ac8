package io.disco.provider.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

/**
 * Turns a list of etcd endpoints into a jetcd {@link ClientBuilder} with one rule: <b>the scheme decides</b>.
 * {@code https://} always means TLS, {@code http://} always means plaintext, and nothing in between:
 * <ul>
 *   <li>{@code https://} endpoints connect with TLS. The server's certificate is verified with the trust
 *       material given ({@link #builder(List, Consumer)}: a CA file, an SSL bundle's trust manager ...) or,
 *       when none is given, with the JVM's default trust store (the one {@code javax.net.ssl.trustStore}
 *       names, else the JDK's {@code cacerts}). A certificate it does not trust fails the TLS handshake: the
 *       library's first request then fails with a message that names the endpoint, says that the TLS
 *       handshake failed and what to check ({@link #diagnose}), and the client never talks plaintext
 *       instead. An {@code https://} endpoint whose server speaks plaintext fails the same way.</li>
 *   <li>{@code http://} endpoints connect in plaintext; trust material given for them is refused
 *       ({@link IllegalArgumentException}), so that a TLS setting never silently goes unused.</li>
 *   <li>A list that mixes {@code http://} and {@code https://} is refused, naming one endpoint of each: one
 *       cluster is reached one way. So is an endpoint without a scheme, with another scheme, or without a
 *       host.</li>
 * </ul>
 * Schemes are case-insensitive; surrounding whitespace is ignored.
 *
 * <p>Why it exists: jetcd's own {@code Client.builder().endpoints(...)} keeps only each endpoint's
 * {@code host:port}, and turns TLS on only when an SSL context is set, so {@code https://etcd:2379} without
 * one connects in plaintext, without a word. A {@link Client} built that way cannot be told apart from one
 * built from {@code http://} (the scheme is gone), so the provider cannot check the clients an application
 * builds itself: build them here. The Spring Boot starter ({@code disco.etcd.endpoints}) and the
 * {@code disco} command-line tool ({@code --endpoints}) build theirs here.
 *
 * <pre>{@code
 * Client client = EtcdClients.builder(List.of("https://etcd-0:2379", "https://etcd-1:2379"),
 *                 tls -> tls.trustManager(new File("/etc/etcd/ca.pem")))      // omit for the JVM's trust store
 *         .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))           // the rest is jetcd's builder
 *         .build();
 * }</pre>
 *
 * <p>The returned builder is jetcd's: set the user, the authority, the namespace and interceptors on it as
 * usual. Replacing its SSL context afterwards ({@code sslContext(...)}) is the caller's own choice; the rule
 * holds for what this class builds.
 */
public final class EtcdClients {

    private EtcdClients() {}

    /**
     * A builder for {@code endpoints}, with TLS verified by the JVM's default trust store when they are
     * {@code https://}.
     *
     * @param endpoints the etcd endpoints, for example {@code https://10.0.0.1:2379}; all {@code http://} or all
     *     {@code https://}
     * @return jetcd's builder, with the endpoints (and TLS for {@code https://}) set
     * @throws NullPointerException if {@code endpoints} or one of them is null
     * @throws IllegalArgumentException if the list is empty, mixes schemes, or has an endpoint without a known
     *     scheme ({@code http}, {@code https}) or without a host
     */
    public static ClientBuilder builder(String... endpoints) {
        return builder(List.of(endpoints));
    }

    /**
     * A builder for {@code endpoints}, with TLS verified by the JVM's default trust store when they are
     * {@code https://}.
     *
     * @param endpoints the etcd endpoints, for example {@code https://10.0.0.1:2379}; all {@code http://} or all
     *     {@code https://}
     * @return jetcd's builder, with the endpoints (and TLS for {@code https://}) set
     * @throws NullPointerException if {@code endpoints} or one of them is null
     * @throws IllegalArgumentException if the list is empty, mixes schemes, or has an endpoint without a known
     *     scheme ({@code http}, {@code https}) or without a host
     */
    public static ClientBuilder builder(List<String> endpoints) {
        try {
            return builder(endpoints, null);
        } catch (SSLException e) {
            throw new IllegalStateException(
                    "the JVM's default trust store gives no usable TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * A builder for {@code https://} endpoints with the given TLS settings, or for {@code http://} ones
     * without any.
     *
     * @param endpoints the etcd endpoints, for example {@code https://10.0.0.1:2379}; all {@code http://} or all
     *     {@code https://}
     * @param tls the TLS settings, applied to gRPC's client {@link SslContextBuilder} after the JVM's default
     *     trust store was set on it: a {@code trustManager} (the CA that signed the members' certificates)
     *     replaces that, a {@code keyManager} adds a client certificate (mutual TLS); null for none
     * @return jetcd's builder, with the endpoints (and TLS for {@code https://}) set
     * @throws NullPointerException if {@code endpoints} or one of them is null
     * @throws IllegalArgumentException if the list is empty, mixes schemes, has an endpoint without a known
     *     scheme ({@code http}, {@code https}) or without a host, or is {@code http://} with {@code tls} given
     * @throws SSLException if {@code tls} gives no usable TLS context (a file without a certificate or key, an
     *     unreadable key)
     */
    public static ClientBuilder builder(List<String> endpoints, Consumer<SslContextBuilder> tls) throws SSLException {
        List<String> urls = check(endpoints);
        boolean secure = urls.get(0).regionMatches(true, 0, "https:", 0, 6);
        if (!secure && tls != null) {
            throw new IllegalArgumentException("TLS settings were given for plaintext endpoints ("
                    + String.join(", ", urls) + "): use https:// endpoints for TLS, or give no TLS settings");
        }
        ClientBuilder builder = Client.builder().endpoints(urls.toArray(String[]::new));
        if (secure) {
            TrustManagerFactory jvmDefault = jvmDefaultTrust();
            try {
                builder.sslContext(b -> {
                    b.trustManager(jvmDefault);
                    if (tls != null) {
                        tls.accept(b);
                    }
                });
            } catch (IllegalArgumentException e) {
                // Netty's word for a file that holds no certificate or key: unusable TLS material, not a bad endpoint
                throw new SSLException("the TLS settings cannot be used: " + e.getMessage(), e);
            }
        }
        return builder;
    }

    /**
     * Checks {@code endpoints} against the rule and says whether they are TLS ones.
     *
     * @param endpoints the etcd endpoints
     * @return true for {@code https://} endpoints, false for {@code http://} ones
     * @throws NullPointerException if {@code endpoints} or one of them is null
     * @throws IllegalArgumentException if the list is empty, mixes schemes, or has an endpoint without a known
     *     scheme ({@code http}, {@code https}) or without a host
     */
    public static boolean tls(List<String> endpoints) {
        return check(endpoints).get(0).regionMatches(true, 0, "https:", 0, 6);
    }

    /**
     * Why {@code client} does not reach etcd, in a few words for a message, when a request of its went
     * unanswered: a refused connection, an unknown host, a TLS handshake that failed (and what to check), an
     * authentication that failed, or no answer at all. It asks the client's connection once, with one request
     * that does not wait for a connection, and takes at most {@code within} (plus a second).
     *
     * @param client the client, built by jetcd's {@code ClientImpl}; for any other the reason is unknown
     * @param within how long the check may take
     * @return the reason; empty when it cannot be told
     * @throws NullPointerException if an argument is null
     */
    public static Optional<String> diagnose(Client client, Duration within) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(within, "within");
        return EtcdEndpoints.of(client).diagnose(within);
    }

    /** The trimmed endpoints, after checking the rule. */
    private static List<String> check(List<String> endpoints) {
        Objects.requireNonNull(endpoints, "endpoints");
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("no etcd endpoint given");
        }
        List<String> urls = new ArrayList<>(endpoints.size());
        String firstHttp = null;
        String firstHttps = null;
        for (String endpoint : endpoints) {
            String url = Objects.requireNonNull(endpoint, "an endpoint is null").trim();
            String scheme = scheme(url);
            if (scheme.equals("https")) {
                firstHttps = firstHttps == null ? url : firstHttps;
            } else {
                firstHttp = firstHttp == null ? url : firstHttp;
            }
            if (firstHttp != null && firstHttps != null) {
                throw new IllegalArgumentException(
                        "the etcd endpoints mix plaintext and TLS: " + firstHttp + " and " + firstHttps
                                + "; one cluster is reached one way: all https:// (TLS) or all http:// (plaintext)");
            }
            urls.add(url);
        }
        return urls;
    }

    /** {@code http} or {@code https}, lower case; anything else is refused. */
    private static String scheme(String url) {
        if (url.isEmpty()) {
            throw new IllegalArgumentException("an etcd endpoint is blank");
        }
        int sep = url.indexOf("://");
        if (sep < 0) {
            throw new IllegalArgumentException("the etcd endpoint '" + url + "' has no scheme: write http://" + url
                    + " (plaintext) or https://" + url + " (TLS)");
        }
        String scheme = url.substring(0, sep).toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("the etcd endpoint '" + url + "' has the scheme " + scheme
                    + "; an etcd endpoint is http:// (plaintext) or https:// (TLS)");
        }
        try {
            if (new URI(url).getHost() == null) {
                throw new IllegalArgumentException(
                        "the etcd endpoint '" + url + "' names no host, for example " + scheme + "://10.0.0.1:2379");
            }
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("the etcd endpoint '" + url + "' is not a URL: " + e.getMessage(), e);
        }
        return scheme;
    }

    /** The JVM's default trust store, read now (it follows {@code javax.net.ssl.trustStore}). */
    private static TrustManagerFactory jvmDefaultTrust() throws SSLException {
        try {
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init((KeyStore) null);
            return f;
        } catch (GeneralSecurityException e) {
            throw new SSLException("cannot read the JVM's default trust store: " + e.getMessage(), e);
        }
    }
}

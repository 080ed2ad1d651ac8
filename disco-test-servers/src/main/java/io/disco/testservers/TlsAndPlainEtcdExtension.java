package io.disco.testservers;

import java.net.URI;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs, for all tests of a class, a single-member etcd that serves clients over TLS
 * beside a plaintext one: the set-up of the tests that check how {@code https://} and {@code http://}
 * endpoints are told apart (the provider's client builder, the CLI's {@code --endpoints}, the Spring Boot
 * starter's {@code disco.etcd.endpoints}). The TLS member's certificates are throwaway ones ({@link
 * EtcdTls#generate}, a CA of their own); it does not ask clients for a certificate.
 *
 * <p>Register it on a {@code static} field (an instance field would never see {@code beforeAll}):
 * <pre>{@code
 * @RegisterExtension
 * static final TlsAndPlainEtcdExtension ETCD = TlsAndPlainEtcdExtension.create();
 *
 * @Test
 * void httpsWithTheCaWorks() {
 *     ... ETCD.secure().endpoint(0), trusting ETCD.tls().caFile() ...
 * }
 * }</pre>
 *
 * <p>Both are started before the first test of the class ({@link EtcdCluster#start(int, EtcdTls)}, which needs a
 * local etcd binary, and {@link EtcdCluster#start(int)}) and closed after the last one.
 */
public final class TlsAndPlainEtcdExtension implements BeforeAllCallback, AfterAllCallback {

    /** The client certificate's common name: unused, as the TLS member does not ask for one. */
    private static final String CLIENT_USER = "client";

    private volatile EtcdTls tls;
    private volatile EtcdCluster secure;
    private volatile EtcdCluster plain;

    private TlsAndPlainEtcdExtension() {}

    /**
     * Returns an extension that runs a TLS member and a plaintext one.
     *
     * @return a new extension
     */
    public static TlsAndPlainEtcdExtension create() {
        return new TlsAndPlainEtcdExtension();
    }

    /**
     * Generates the certificates and starts both members.
     *
     * @param context the JUnit context of the test class
     */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        tls = EtcdTls.generate(false, CLIENT_USER);
        secure = EtcdCluster.start(1, tls);
        plain = EtcdCluster.start(1);
    }

    /**
     * Closes the members that were started.
     *
     * @param context the JUnit context of the test class
     */
    @Override
    public synchronized void afterAll(ExtensionContext context) {
        try {
            if (secure != null) {
                secure.close();
            }
        } finally {
            secure = null;
            if (plain != null) {
                plain.close();
            }
            plain = null;
        }
    }

    /**
     * Returns the TLS member's certificates: its CA is the one to trust.
     *
     * @return the certificates
     * @throws IllegalStateException outside the tests of the class
     */
    public EtcdTls tls() {
        return running(tls);
    }

    /**
     * Returns the member that serves clients over TLS; its endpoint is an {@code https://} URL.
     *
     * @return the TLS cluster
     * @throws IllegalStateException outside the tests of the class
     */
    public EtcdCluster secure() {
        return running(secure);
    }

    /**
     * Returns the plaintext member; its endpoint is an {@code http://} URL.
     *
     * @return the plaintext cluster
     * @throws IllegalStateException outside the tests of the class
     */
    public EtcdCluster plain() {
        return running(plain);
    }

    /**
     * Returns the TLS member's endpoint without its scheme, {@code host:port}.
     *
     * @return the TLS member's host and port
     * @throws IllegalStateException outside the tests of the class
     */
    public String secureHostPort() {
        return hostPort(secure());
    }

    /**
     * Returns the plaintext member's endpoint without its scheme, {@code host:port}.
     *
     * @return the plaintext member's host and port
     * @throws IllegalStateException outside the tests of the class
     */
    public String plainHostPort() {
        return hostPort(plain());
    }

    private static String hostPort(EtcdCluster cluster) {
        return URI.create(cluster.endpoint(0)).getAuthority();
    }

    private static <T> T running(T started) {
        if (started == null) {
            throw new IllegalStateException(
                    "the TLS and plaintext etcd members are not running: register"
                            + " TlsAndPlainEtcdExtension on a static field with @RegisterExtension and use it from tests of that class");
        }
        return started;
    }
}

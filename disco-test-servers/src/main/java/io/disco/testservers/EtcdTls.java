package io.disco.testservers;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Throwaway certificates for etcd members with TLS, generated at test time (nothing is committed): a
 * CA, a server certificate for {@code 127.0.0.1} and {@code localhost}, and a client certificate whose
 * common name is the client's etcd user (with {@code --client-cert-auth} and authentication enabled,
 * etcd takes the user from it). Written as PEM files into a directory; the private keys are PKCS#8.
 *
 * <p>Give it to {@link EtcdCluster#start(int, EtcdTls)}; a jetcd client then connects with
 * {@code GrpcSslContexts.forClient().trustManager(caFile()).keyManager(clientCertFile(), clientKeyFile())}.
 */
public final class EtcdTls {

    private static final Duration VALIDITY = Duration.ofDays(2);

    private final Path dir;
    private final boolean clientCertAuth;
    private final X509Certificate ca;
    private final X509Certificate client;
    private final PrivateKey clientKey;

    private EtcdTls(
            Path dir, boolean clientCertAuth, X509Certificate ca, X509Certificate client, PrivateKey clientKey) {
        this.dir = dir;
        this.clientCertAuth = clientCertAuth;
        this.ca = ca;
        this.client = client;
        this.clientKey = clientKey;
    }

    /**
     * Generates the certificates into a new temporary directory.
     *
     * @param clientCertAuth whether members require a client certificate ({@code --client-cert-auth}, mutual TLS)
     * @param clientUser the common name of the client certificate (the etcd user it authenticates as)
     * @return the certificates
     */
    public static EtcdTls generate(boolean clientCertAuth, String clientUser) {
        try {
            Path dir = Files.createTempDirectory("disco-etcd-tls");
            KeyPair caKeys = keys();
            X509Certificate ca =
                    certificate("CN=disco test CA", caKeys, "CN=disco test CA", caKeys.getPrivate(), true, null, null);
            KeyPair serverKeys = keys();
            X509Certificate server = certificate(
                    "CN=etcd",
                    serverKeys,
                    "CN=disco test CA",
                    caKeys.getPrivate(),
                    false,
                    new GeneralNames(new GeneralName[] {
                        new GeneralName(
                                GeneralName.iPAddress,
                                InetAddress.getLoopbackAddress().getHostAddress()),
                        new GeneralName(GeneralName.dNSName, "localhost")
                    }),
                    new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth});
            KeyPair clientKeys = keys();
            X509Certificate client = certificate(
                    "CN=" + clientUser,
                    clientKeys,
                    "CN=disco test CA",
                    caKeys.getPrivate(),
                    false,
                    null,
                    new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth});
            pem(dir.resolve("ca.pem"), ca);
            pem(dir.resolve("server.pem"), server);
            pem(dir.resolve("server-key.pem"), serverKeys.getPrivate());
            pem(dir.resolve("client.pem"), client);
            pem(dir.resolve("client-key.pem"), clientKeys.getPrivate());
            return new EtcdTls(dir, clientCertAuth, ca, client, clientKeys.getPrivate());
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the test certificates", e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("could not generate the test certificates", e);
        }
    }

    private static KeyPair keys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256, new SecureRandom());
        return g.generateKeyPair();
    }

    private static X509Certificate certificate(
            String subject,
            KeyPair keys,
            String issuer,
            PrivateKey signer,
            boolean isCa,
            GeneralNames sans,
            KeyPurposeId[] purposes)
            throws GeneralSecurityException, OperatorCreationException, IOException {
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                new X500Name(issuer),
                new BigInteger(64, new SecureRandom()),
                Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(VALIDITY)),
                new X500Name(subject),
                keys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
        b.addExtension(
                Extension.keyUsage,
                true,
                new KeyUsage(
                        isCa
                                ? KeyUsage.keyCertSign | KeyUsage.cRLSign
                                : KeyUsage.digitalSignature | KeyUsage.keyEncipherment | KeyUsage.keyAgreement));
        if (sans != null) {
            b.addExtension(Extension.subjectAlternativeName, false, sans);
        }
        if (purposes != null) {
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes));
        }
        return new JcaX509CertificateConverter()
                .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    }

    private static void pem(Path file, Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(
                    o instanceof PrivateKey k ? new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(k, null) : o);
        }
        Files.writeString(file, out.toString(), StandardCharsets.US_ASCII);
    }

    /** @return whether members require client certificates */
    public boolean clientCertAuth() {
        return clientCertAuth;
    }

    /** @return the CA certificate (PEM), to trust */
    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /** @return the client certificate (PEM) */
    public Path clientCertFile() {
        return dir.resolve("client.pem");
    }

    /** @return the client's private key (PEM, PKCS#8) */
    public Path clientKeyFile() {
        return dir.resolve("client-key.pem");
    }

    /** @return the server certificate (PEM) for {@code 127.0.0.1} and {@code localhost}: etcd's, or another server's in a test */
    public Path serverCertFile() {
        return dir.resolve("server.pem");
    }

    /** @return the server's private key (PEM, PKCS#8) */
    public Path serverKeyFile() {
        return dir.resolve("server-key.pem");
    }

    /** The flags a member needs for these certificates. */
    java.util.List<String> memberFlags() {
        java.util.List<String> flags = new java.util.ArrayList<>(
                java.util.List.of("--cert-file=" + serverCertFile(), "--key-file=" + serverKeyFile()));
        if (clientCertAuth) {
            // A trusted CA makes etcd verify any client certificate it is shown, so it goes with client-cert-auth only.
            flags.add("--trusted-ca-file=" + caFile());
            flags.add("--client-cert-auth");
        }
        return flags;
    }

    /** @return a JDK SSL context that trusts the CA and presents the client certificate, for health checks */
    public SSLContext sslContext() {
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            char[] pw = "disco".toCharArray();
            keys.setKeyEntry("client", clientKey, pw, new java.security.cert.Certificate[] {client, ca});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, pw);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("could not build the test SSL context", e);
        }
    }

    @Override
    public String toString() {
        return "EtcdTls[" + dir + (clientCertAuth ? ", mutual" : "") + "]";
    }
}

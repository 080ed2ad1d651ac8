package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdTls;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A client that cannot open its lease says why (issue 45, item 6): a refused port, an unknown host, a TLS
 * handshake that fails either way, a wrong password and an endpoint that accepts connections but never
 * answers each give their own message, naming the endpoints; none is "no answer to the lease grant" when
 * something else is known. The same message is {@code Disco.status()}'s last problem while it heals.
 */
class ConnectionFailureTest {

    private static final EtcdOptions OPTIONS = Etcd.options(5, 1);

    /** The words of each kind of failure, of which a message must say exactly its own. */
    private static final List<String> KINDS = List.of("refused", "unknown host", "tls", "authentication", "no answer");

    private static DiscoException openFails(Client client) {
        return assertThrows(
                DiscoException.class, () -> EtcdSession.open(client, OPTIONS).close());
    }

    /** Asserts that the message names the endpoint and says {@code kind}, and no other kind. */
    private static void says(DiscoException e, String endpoint, String kind) {
        String m = e.getMessage();
        System.out.println(kind + ": " + m);
        assertTrue(m.contains(endpoint), "names " + endpoint + ": " + m);
        String lower = m.toLowerCase(Locale.ROOT);
        assertTrue(lower.contains(kind), "says '" + kind + "': " + m);
        for (String other : KINDS) {
            if (!other.equals(kind)) {
                assertTrue(!lower.contains(other), "says '" + other + "' too: " + m);
            }
        }
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void refusedPort() throws Exception {
        String endpoint = "127.0.0.1:" + closedPort();
        try (Client client = Client.builder().endpoints("http://" + endpoint).build()) {
            says(openFails(client), endpoint, "refused");
            // the client's own status says the same while it heals, and its describe() names the endpoint
            try (Disco disco = EtcdProvider.healingDisco(client, OPTIONS)) {
                DiscoStatus s = disco.status();
                assertTrue(
                        s.lastProblem().orElse("").contains("refused")
                                && s.lastProblem().get().contains(endpoint),
                        s.toString());
                assertTrue(disco.toString().contains(endpoint), disco.toString());
            }
        }
    }

    @Test
    void unknownHost() {
        String endpoint = "disco-no-such-host.invalid:2379";
        try (Client client = Client.builder().endpoints("http://" + endpoint).build()) {
            says(openFails(client), endpoint, "unknown host");
        }
    }

    @Test
    void anEndpointThatAcceptsButNeverAnswers() throws Exception {
        // The kernel completes the TCP handshake into the backlog; nobody ever reads or writes.
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
            String endpoint = "127.0.0.1:" + silent.getLocalPort();
            try (Client client =
                    Client.builder().endpoints("http://" + endpoint).build()) {
                says(openFails(client), endpoint, "no answer");
            }
        }
    }

    @Test
    void tlsHandshakeFailures() throws Exception {
        EtcdTls tls = EtcdTls.generate(false, "client");
        EtcdTls otherCa = EtcdTls.generate(false, "client");
        try (EtcdCluster etcd = EtcdCluster.start(1, tls)) {
            String endpoint = URI.create(etcd.endpoint(0)).getAuthority();
            // trusts another CA: the server's certificate is refused
            try (Client client =
                    tlsClient(etcd, b -> b.trustManager(otherCa.caFile().toFile()))) {
                says(openFails(client), endpoint, "tls");
            }
            // no TLS at all against a TLS endpoint
            try (Client client =
                    Client.builder().endpoints("http://" + endpoint).build()) {
                DiscoException e = openFails(client);
                says(e, endpoint, "tls");
            }
        }
        // TLS against a plaintext endpoint
        try (EtcdCluster plain = EtcdCluster.start(1)) {
            String endpoint = URI.create(plain.endpoint(0)).getAuthority();
            try (Client client = Client.builder()
                    .endpoints("https://" + endpoint)
                    .sslContext(b -> b.trustManager(tls.caFile().toFile()))
                    .build()) {
                says(openFails(client), endpoint, "tls");
            }
        }
    }

    @Test
    void wrongPassword() {
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            etcd.enableAuth("rootpw");
            String endpoint = URI.create(etcd.endpoint(0)).getAuthority();
            try (Client client = Client.builder()
                    .endpoints(etcd.endpoints().toArray(String[]::new))
                    .user(ByteSequence.from("root", StandardCharsets.UTF_8))
                    .password(ByteSequence.from("not-the-password", StandardCharsets.UTF_8))
                    .build()) {
                DiscoException e = openFails(client);
                assertInstanceOf(AccessDeniedException.class, e);
                says(e, endpoint, "authentication");
            }
        }
    }

    private static Client tlsClient(EtcdCluster etcd, Consumer<io.netty.handler.ssl.SslContextBuilder> ssl)
            throws Exception {
        return Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .sslContext(ssl::accept)
                .build();
    }
}

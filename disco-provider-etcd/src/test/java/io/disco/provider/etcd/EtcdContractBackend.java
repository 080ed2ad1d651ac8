package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnreachableClient;
import io.disco.core.SessionListener;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.TcpProxy;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The etcd backend of the contract kit: {@link EtcdProvider#testableBackend} on one jetcd client (its owners
 * {@link EtcdSession}s), plus the kit's clients whose link to the member can be stalled or cut. Every contract
 * class of the run shares one etcd member and one client (JUnit's root store), so the kit adds no member start-up per
 * class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdContractBackend ETCD = new EtcdContractBackend();
 * }</pre>
 */
final class EtcdContractBackend implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(EtcdContractBackend.class);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final EtcdExtension etcd = EtcdExtension.sharedMember();
    /** Whether a stall freezes the member itself (SIGSTOP) rather than one client's link to it. */
    private final boolean stallFreezesMember;

    private volatile Client client;
    private volatile TestableBackend backend;
    /** The run's root store: what a test makes for the whole run (a stallable client's proxy) is closed with it. */
    private volatile ExtensionContext.Store runStore;

    /** A backend whose stalls cut one client's link to the member (a proxy). */
    EtcdContractBackend() {
        this(false);
    }

    /**
     * @param stallFreezesMember whether a stall freezes the shared member itself with SIGSTOP, for every client
     *                           of the test (the fault run of issue 44), rather than one client's link
     */
    EtcdContractBackend(boolean stallFreezesMember) {
        this.stallFreezesMember = stallFreezesMember;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        etcd.beforeAll(context);
        runStore = context.getRoot().getStore(SHARED);
        client = runStore.getOrComputeIfAbsent(
                "client",
                k -> {
                    Client c = Etcd.client(etcd.cluster());
                    try {
                        Etcd.revision(c); // connected before the first test's timed parts
                    } catch (Exception e) {
                        c.close();
                        throw new IllegalStateException(
                                "etcd does not answer at " + etcd.cluster().endpoints(), e);
                    }
                    return c;
                },
                Client.class);
        backend = EtcdProvider.testableBackend(client, options(Duration.ofSeconds(30)));
    }

    /** @return the backend the contract classes run on: the provider's own, with its test hooks */
    TestableBackend backend() {
        return backend;
    }

    /** @return the shared client, for the etcd-specific parts of a test */
    Client client() {
        return client;
    }

    /** @return a backend like {@link #backend()} whose owners tell {@code listener} of their events */
    TestableBackend listening(SessionListener listener) {
        return EtcdProvider.testableBackend(
                client,
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(30))
                        .requestTimeout(REQUEST_TIMEOUT)
                        .listener(listener)
                        .build());
    }

    private static EtcdOptions options(Duration ttl) {
        return EtcdOptions.builder().ttl(ttl).requestTimeout(REQUEST_TIMEOUT).build();
    }

    /**
     * A client of its own that reaches the member through a {@link TcpProxy}: {@code stall()} stops forwarding
     * without dropping a byte (a request sent meanwhile is delivered, and applied, on {@code resume()}), as a
     * member frozen with SIGSTOP would; the proxy and the client are closed when the run ends. With
     * {@link #EtcdContractBackend(boolean) stallFreezesMember}, a stall freezes the member itself.
     */
    StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        EtcdOptions options =
                EtcdOptions.builder().ttl(ttl).requestTimeout(requestTimeout).build();
        if (stallFreezesMember) {
            StallableClient.Link frozen = new StallableClient.Link() {
                @Override
                public void stall() {
                    etcd.cluster().pause(0);
                }

                @Override
                public void resume() {
                    etcd.cluster().resume(0);
                }
            };
            return new StallableClient(new EtcdDiscoBackend(client, options), frozen);
        }
        TcpProxy proxy = proxyToMember();
        Client own =
                Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build();
        StallableClient.Link link = blackholeLink(own, proxy);
        return new StallableClient(new EtcdDiscoBackend(own, options), link);
    }

    /**
     * A client of its own that reaches the member through a {@link TcpProxy}, whose {@code stall()} stops
     * forwarding (connections hang, nothing is answered) for as long as the test likes; the proxy and the client
     * are closed when the run ends. Its endpoints are the proxy's.
     */
    UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        TcpProxy proxy = proxyToMember();
        String endpoint = "127.0.0.1:" + proxy.port();
        Client own = Client.builder()
                .endpoints("http://" + endpoint)
                .interceptor(EtcdDeadlines.unary(requestTimeout))
                .build();
        StallableClient.Link link = blackholeLink(own, proxy);
        EtcdOptions options = EtcdOptions.builder()
                .ttl(ttl)
                .requestTimeout(requestTimeout)
                .ownerWait(ownerWait)
                .build();
        return new UnreachableClient(new EtcdDiscoBackend(own, options), endpoint, link);
    }

    /** @return a proxy to the member, closed by whoever owns it */
    private TcpProxy proxyToMember() {
        URI member = URI.create(etcd.cluster().endpoints().get(0));
        try {
            return new TcpProxy(new InetSocketAddress(member.getHost(), member.getPort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Closes {@code own} and {@code proxy} when the run ends.
     *
     * @return a link whose {@code stall()} blackholes the proxy and whose {@code resume()} opens it again
     */
    private StallableClient.Link blackholeLink(Client own, TcpProxy proxy) {
        runStore.put(UUID.randomUUID(), (ExtensionContext.Store.CloseableResource) () -> {
            own.close();
            proxy.close();
        });
        return new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.blackhole(true);
            }

            @Override
            public void resume() {
                proxy.blackhole(false);
            }
        };
    }
}

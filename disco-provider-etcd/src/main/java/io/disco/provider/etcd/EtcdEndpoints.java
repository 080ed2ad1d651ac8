package io.disco.provider.etcd;

import io.etcd.jetcd.Client;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the library knows of a jetcd {@link Client}'s connection: its endpoints (for messages), whether the
 * application closed it, why it cannot connect, and a way to try connecting again at once. jetcd exposes
 * none of it, so it is read from the client's connection manager (its builder and its gRPC channel) by
 * reflection, once per client; a client whose insides are not jetcd's ({@code ClientImpl}) is described as
 * plain "etcd", is never taken for closed, and its failures are not diagnosed.
 *
 * <p>One per client ({@link #of(Client)}), held weakly by the client; it keeps no reference to the client
 * itself. Thread-safe.
 */
final class EtcdEndpoints {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdEndpoints.class);

    /** What to check after a failed TLS handshake, appended to the messages that say so. */
    static final String CHECK_TLS =
            ": check that the client trusts the CA that signed the server's certificate (the trust"
                    + " material given: disco.etcd.ssl.bundle, --cacert or the jetcd SslContext; with none, the JVM's default trust"
                    + " store), and that the server's certificate is valid and names the endpoint's host";

    private static final Map<Client, EtcdEndpoints> BY_CLIENT = Collections.synchronizedMap(new WeakHashMap<>());

    /** What messages say when the application closed the client first. */
    static final String CLOSED_FIRST = "the jetcd Client was closed before the disco client or session that runs on it"
            + " (close the Disco, or the EtcdSession, first and the Client last)";

    /** Endpoints as messages show them: {@code 10.0.0.1:2379, 10.0.0.2:2379}; empty when unknown. */
    private final String endpoints;
    /** Whether the client speaks TLS. */
    private final boolean tls;
    /** The client's channel, or null when it could not be read. */
    private final ManagedChannel channel;
    /** Told once when the channel is shut down (the client closed). */
    private final Set<Runnable> closedListeners = new CopyOnWriteArraySet<>();

    private volatile boolean watching;

    private EtcdEndpoints(String endpoints, boolean tls, ManagedChannel channel) {
        this.endpoints = endpoints;
        this.tls = tls;
        this.channel = channel;
    }

    /** @return the endpoints of {@code client}, read once */
    static EtcdEndpoints of(Client client) {
        synchronized (BY_CLIENT) {
            return BY_CLIENT.computeIfAbsent(client, EtcdEndpoints::read);
        }
    }

    private static EtcdEndpoints read(Client client) {
        try {
            Field f = client.getClass().getDeclaredField("connectionManager");
            f.setAccessible(true);
            Object manager = f.get(client);
            Method builderOf = manager.getClass().getDeclaredMethod("builder");
            builderOf.setAccessible(true);
            io.etcd.jetcd.ClientBuilder builder = (io.etcd.jetcd.ClientBuilder) builderOf.invoke(manager);
            Method channelOf = manager.getClass().getDeclaredMethod("getChannel");
            channelOf.setAccessible(true);
            ManagedChannel channel = (ManagedChannel) channelOf.invoke(manager);
            return new EtcdEndpoints(targets(builder.target()), builder.sslContext() != null, channel);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug(
                    "cannot read the endpoints and channel of {} ({}): messages name no endpoint",
                    client.getClass().getName(),
                    e.toString());
            return new EtcdEndpoints("", false, null);
        }
    }

    /** jetcd's target {@code ip:///a:2379,b:2379} (or {@code dns:///...}) as {@code a:2379, b:2379}. */
    static String targets(String target) {
        if (target == null) {
            return "";
        }
        int scheme = target.indexOf(":///");
        String list = scheme >= 0 ? target.substring(scheme + 4) : target;
        return String.join(", ", list.split(","));
    }

    /** @return {@code etcd at a:2379, b:2379}, or {@code etcd} when the endpoints are unknown */
    String describe() {
        return endpoints.isEmpty() ? "etcd" : "etcd at " + endpoints + (tls ? " (TLS)" : "");
    }

    /** @return whether the application closed the client (its channel is shut down); false when unknown */
    boolean closed() {
        return channel != null && channel.isShutdown();
    }

    /**
     * Runs {@code listener} once when the client is closed (at once if it is); {@link #forget} it when it
     * no longer matters. Event-driven: one watcher of the channel's state per client.
     */
    void onClosed(Runnable listener) {
        if (channel == null) {
            return;
        }
        closedListeners.add(listener);
        watch();
        if (closed() && closedListeners.remove(listener)) {
            listener.run();
        }
    }

    void forget(Runnable listener) {
        closedListeners.remove(listener);
    }

    /** Guards {@code watching}: private, never this object, which a user's code could synchronise on. */
    private final Object watchLock = new Object();

    private void watch() {
        synchronized (watchLock) {
            if (watching) {
                return;
            }
            watching = true;
        }
        follow(channel.getState(false));
    }

    private void follow(ConnectivityState seen) {
        if (seen == ConnectivityState.SHUTDOWN) {
            for (Runnable l : closedListeners) {
                if (closedListeners.remove(l)) {
                    try {
                        l.run();
                    } catch (RuntimeException e) {
                        LOG.warn("a listener of the jetcd client's closing failed", e);
                    }
                }
            }
            return;
        }
        try {
            channel.notifyWhenStateChanged(seen, () -> follow(channel.getState(false)));
        } catch (RuntimeException e) {
            LOG.debug("cannot follow the jetcd channel's state: {}", e.toString());
        }
    }

    /**
     * Tries to connect again at once if the channel is waiting to retry a failed connection: gRPC backs
     * off up to two minutes between attempts, and the library must notice an etcd that answers again
     * within a second or two. One connection attempt per call at most; cheap when connected.
     */
    void reconnectNow() {
        if (channel != null && channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff();
        }
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    };

    /** etcd's Maintenance {@code Status}, with an empty request: any member answers it, without authentication. */
    private static final MethodDescriptor<byte[], byte[]> STATUS = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("etcdserverpb.Maintenance/Status")
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    /**
     * Why the endpoints did not answer a request in time, in a few words for a message: the connection
     * refused, an unknown host, a TLS handshake that failed, no answer at all, or (when they do answer) that
     * they answer other requests. jetcd's requests wait for a connection until their deadline without saying
     * why; one request that does not wait (gRPC's fail-fast) gets the channel's own reason. Takes at most
     * {@code within}.
     *
     * @param within how long the check may take
     * @return the reason, for example {@code connection refused (Connection refused: /127.0.0.1:2379)}; empty
     *     when it cannot be told
     */
    Optional<String> diagnose(Duration within) {
        if (channel == null || channel.isShutdown()) {
            return Optional.empty();
        }
        CompletableFuture<Status> answer = new CompletableFuture<>();
        try {
            ClientCall<byte[], byte[]> call = channel.newCall(
                    STATUS, CallOptions.DEFAULT.withDeadlineAfter(within.toNanos(), TimeUnit.NANOSECONDS));
            call.start(
                    new ClientCall.Listener<>() {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            answer.complete(status);
                        }
                    },
                    new Metadata());
            call.request(1);
            call.sendMessage(new byte[0]);
            call.halfClose();
            Status s = answer.get(within.toNanos() + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
            if (!tls && s.getCode() == Status.Code.UNAVAILABLE && closedByPeer(s.getCause())) {
                // The endpoint closed (or reset) the connection before HTTP/2 began: is it a TLS endpoint?
                Optional<String> speaking = speaksTls(within);
                if (speaking.isPresent()) {
                    return Optional.of(
                            "the TLS handshake never started: " + speaking.get() + " speaks TLS and the client"
                                    + " connects without it (use https:// endpoints, with the CA that signed the server's certificate)");
                }
            }
            return Optional.of(describe(s, within));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    /**
     * Whether a failed connection was closed or reset by the endpoint (no cause, or an I/O error other than
     * refused, unreachable or an unknown name): a TLS endpoint does that to a client that speaks plaintext,
     * closing at once or resetting, as it pleases.
     */
    private static boolean closedByPeer(Throwable cause) {
        return cause == null
                || cause instanceof java.io.IOException
                        && !(cause instanceof ConnectException)
                        && !(cause instanceof NoRouteToHostException)
                        && !(cause instanceof UnknownHostException);
    }

    /**
     * The first endpoint that completes a TLS handshake's first step (the server's hello), for a client
     * configured without TLS whose connections are closed at once. A check only: it trusts any certificate
     * and sends nothing.
     */
    private Optional<String> speaksTls(Duration within) {
        for (String hostPort : endpoints.split(", ")) {
            int colon = hostPort.lastIndexOf(':');
            if (colon < 0) {
                continue;
            }
            String host = hostPort.substring(0, colon);
            int port;
            try {
                port = Integer.parseInt(hostPort.substring(colon + 1));
            } catch (NumberFormatException e) {
                continue;
            }
            int timeout = (int) Math.max(100, within.toMillis());
            try {
                javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
                context.init(null, new javax.net.ssl.TrustManager[] {TRUST_ANY}, null);
                try (java.net.Socket plain = new java.net.Socket()) {
                    plain.connect(new java.net.InetSocketAddress(host, port), timeout);
                    plain.setSoTimeout(timeout);
                    try (javax.net.ssl.SSLSocket tlsSocket = (javax.net.ssl.SSLSocket)
                            context.getSocketFactory().createSocket(plain, host, port, false)) {
                        tlsSocket.startHandshake();
                        return Optional.of(hostPort);
                    }
                }
            } catch (javax.net.ssl.SSLHandshakeException e) {
                if (String.valueOf(e.getMessage()).contains("alert")) {
                    return Optional.of(
                            hostPort); // the server answered in TLS, refusing something (a client certificate)
                }
            } catch (Exception e) {
                // not TLS, or not reachable: nothing to say
            }
        }
        return Optional.empty();
    }

    private static final javax.net.ssl.X509TrustManager TRUST_ANY = new javax.net.ssl.X509TrustManager() {
        @Override
        public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

        @Override
        public java.security.cert.X509Certificate[] getAcceptedIssuers() {
            return new java.security.cert.X509Certificate[0];
        }
    };

    /** The failure of a request that did not wait for a connection, in a few words. */
    static String describe(Status s, Duration within) {
        if (s.isOk()) {
            return "the endpoints answer other requests, but the cluster did not answer this one in time"
                    + " (no leader, or overloaded?)";
        }
        for (Throwable c = s.getCause(); c != null; c = c.getCause()) {
            if (c instanceof UnknownHostException || c instanceof UnresolvedAddressException) {
                return "unknown host: the name could not be resolved (DNS)" + detail(c);
            }
            if (c instanceof SSLException || c.getClass().getName().endsWith("NotSslRecordException")) {
                return "the TLS handshake failed" + detail(c) + CHECK_TLS;
            }
            if (c instanceof NoRouteToHostException) {
                return "no route to host" + detail(c);
            }
            if (c instanceof ConnectException
                    && String.valueOf(c.getMessage()).toLowerCase(Locale.ROOT).contains("refused")) {
                return "connection refused: nothing listens on the port" + detail(c);
            }
            if (c instanceof ConnectException) {
                return "the connection failed" + detail(c);
            }
        }
        String description = String.valueOf(s.getDescription());
        if (description.contains("TLS negotiation") || description.contains("ClientTlsHandler")) {
            // gRPC names the pipeline of a connection that broke before its TLS negotiation ended (its client TLS
            // handler still in it), as an io exception "Connection reset" when the plaintext server answered first
            return "the TLS handshake failed: the endpoint closed the connection during it (a plaintext endpoint reached"
                    + " with TLS?)";
        }
        if (description.contains("not SETTINGS") && description.contains("1503")) {
            // A TLS alert record (0x15 0x03 ...) where HTTP/2 was expected: a TLS endpoint reached without TLS.
            return "the endpoint speaks TLS and the client connects without it: the TLS handshake never started"
                    + " (use https:// endpoints with the CA that signed the server's certificate)";
        }
        if (s.getCode() == Status.Code.UNAUTHENTICATED || s.getCode() == Status.Code.PERMISSION_DENIED) {
            return "authentication failed: " + s.getDescription();
        }
        if (s.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            return "no answer: the endpoints did not even complete a connection within " + within.toMillis()
                    + " ms (a firewall that drops packets, a frozen or overloaded host)";
        }
        return s.getCode()
                + (s.getDescription() == null ? "" : ": " + s.getDescription())
                + (s.getCause() == null ? "" : detail(s.getCause()));
    }

    private static String detail(Throwable c) {
        String m = c.getMessage();
        return m == null || m.isBlank() ? "" : " (" + m.lines().findFirst().orElse(m) + ")";
    }
}

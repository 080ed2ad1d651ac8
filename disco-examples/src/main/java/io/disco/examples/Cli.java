package io.disco.examples;

import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The command line shared by the examples: {@code --endpoints a,b,c} (or {@code --endpoints=...}),
 * falling back to the environment variable {@value #ENV_ENDPOINTS} and then to
 * {@value #DEFAULT_ENDPOINTS}; and a port, given as {@code --port N} or as a bare number.
 */
public final class Cli {

    /** The environment variable read when {@code --endpoints} is absent. */
    public static final String ENV_ENDPOINTS = "DISCO_ETCD_ENDPOINTS";
    /** The endpoints used when neither {@code --endpoints} nor {@value #ENV_ENDPOINTS} is given. */
    public static final String DEFAULT_ENDPOINTS = "localhost:2379";

    private final List<String> endpoints;
    private final int port;

    private Cli(List<String> endpoints, int port) {
        this.endpoints = endpoints;
        this.port = port;
    }

    /**
     * Parses the arguments against the process environment.
     *
     * @param args the main arguments
     * @param defaultPort the port when none is given
     * @return the parsed command line
     * @throws IllegalArgumentException for an unknown option or a bad port, with a usage message
     */
    public static Cli parse(String[] args, int defaultPort) {
        return parse(args, defaultPort, System.getenv());
    }

    static Cli parse(String[] args, int defaultPort, Map<String, String> env) {
        String endpoints = null;
        Integer port = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--endpoints") || a.equals("--port")) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a + " needs a value. " + usage(defaultPort));
                }
                String v = args[++i];
                if (a.equals("--endpoints")) {
                    endpoints = v;
                } else {
                    port = port(v, defaultPort);
                }
            } else if (a.startsWith("--endpoints=")) {
                endpoints = a.substring("--endpoints=".length());
            } else if (a.startsWith("--port=")) {
                port = port(a.substring("--port=".length()), defaultPort);
            } else if (!a.startsWith("-") && port == null) {
                port = port(a, defaultPort);
            } else {
                throw new IllegalArgumentException("unknown argument '" + a + "'. " + usage(defaultPort));
            }
        }
        if (endpoints == null || endpoints.isBlank()) {
            endpoints = env.get(ENV_ENDPOINTS);
        }
        if (endpoints == null || endpoints.isBlank()) {
            endpoints = DEFAULT_ENDPOINTS;
        }
        List<String> list = new ArrayList<>();
        for (String e : endpoints.split(",")) {
            if (!e.isBlank()) {
                list.add(normalize(e.strip()));
            }
        }
        if (list.isEmpty()) {
            throw new IllegalArgumentException("no etcd endpoint in '" + endpoints + "'. " + usage(defaultPort));
        }
        return new Cli(List.copyOf(list), port == null ? defaultPort : port);
    }

    private static int port(String v, int defaultPort) {
        try {
            int p = Integer.parseInt(v);
            if (p >= 0 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException ignored) {
            // fall through to the message
        }
        throw new IllegalArgumentException("port must be a number in 0..65535, got '" + v + "'. " + usage(defaultPort));
    }

    private static String usage(int defaultPort) {
        return "Usage: [--endpoints host:port[,host:port...]] [--port N | N] (defaults: endpoints from " + ENV_ENDPOINTS
                + " or " + DEFAULT_ENDPOINTS + ", port " + defaultPort + ")";
    }

    /**
     * Adds {@code http://} to an endpoint given as {@code host:port}.
     *
     * @param endpoint an endpoint with or without a scheme
     * @return the endpoint as a URL
     */
    public static String normalize(String endpoint) {
        return endpoint.contains("://") ? endpoint : "http://" + endpoint;
    }

    /** @return the etcd endpoints, as URLs */
    public List<String> endpoints() {
        return endpoints;
    }

    /** @return the port: the one to listen on (servers) or the resource's (clients) */
    public int port() {
        return port;
    }

    /**
     * Builds a jetcd client for the endpoints. The caller closes it.
     *
     * @param endpoints etcd client URLs
     * @return a new client
     */
    public static Client etcdClient(List<String> endpoints) {
        return Client.builder()
                .endpoints(endpoints.toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(EtcdOptions.defaults().requestTimeout()))
                .build();
    }

    /**
     * Waits until etcd answers one read through {@code client}. The examples call it before they
     * open a short-TTL session: connecting on a cold JVM can take a good part of a 2 s TTL, and a
     * session counts its lease's validity from the moment it sent the grant.
     *
     * @param client the client
     * @param timeout how long to wait
     * @throws Exception if etcd does not answer in time
     */
    public static void connect(Client client, Duration timeout) throws Exception {
        client.getKVClient()
                .get(ByteSequence.from("/disco/examples/ping", StandardCharsets.UTF_8))
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public String toString() {
        return "endpoints=" + endpoints + " port=" + port;
    }
}

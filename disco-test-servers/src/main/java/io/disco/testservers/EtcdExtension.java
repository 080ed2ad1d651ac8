package io.disco.testservers;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that runs one {@link EtcdCluster} for all tests of a class.
 *
 * <p>Register it on a {@code static} field (an instance field would never see
 * {@code beforeAll}):
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdExtension ETCD = EtcdExtension.cluster(3);
 *
 * @Test
 * void survivesACrash(EtcdCluster etcd) {   // or ETCD.cluster()
 *     etcd.kill(0);
 *     ...
 * }
 * }</pre>
 *
 * <p>The cluster is started with {@link EtcdCluster#start(int)} before the first test of the class
 * (so it follows the same resolution order and fails, never skips, when no etcd is available) and
 * closed after the last one. {@code @Nested} classes share the cluster of the class that started
 * it. {@link #sharedMember()} instead runs one member for every class of the test run that registers
 * it (started by the first, stopped when the run ends), for suites of many short classes whose tests
 * use names of their own. Test methods and constructors may declare an {@link EtcdCluster} parameter. Fault operations
 * on an external or container cluster throw {@link UnsupportedOperationException}, so such a test
 * fails.
 */
public final class EtcdExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    /** Where the shared member is kept: the root context's store, closed when the test run ends. */
    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(EtcdExtension.class, "shared");

    private final int members;
    private final boolean shared;
    private volatile EtcdCluster cluster;
    private volatile String owner;
    /** The class's client ({@link #client()}), or null before its first use. */
    private Client client;
    /** The outermost class whose tests use this extension (its {@code @Nested} classes close nothing of it). */
    private String testClass;

    private EtcdExtension(int members, boolean shared) {
        if (members < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least 1 member, got " + members);
        }
        this.members = members;
        this.shared = shared;
    }

    /**
     * Returns an extension that runs a single-member cluster.
     *
     * @return a new extension
     */
    public static EtcdExtension singleMember() {
        return new EtcdExtension(1, false);
    }

    /**
     * Returns an extension that runs one single-member cluster for the whole test run: the first class
     * that registers such an extension starts it, every later one uses the same member, and it stops
     * when the run ends (JUnit's root store). Tests on it must not rely on a fresh member: they use
     * names (key prefixes) of their own and never stop or pause it.
     *
     * @return a new extension on the shared member
     */
    public static EtcdExtension sharedMember() {
        return new EtcdExtension(1, true);
    }

    /**
     * Returns an extension that runs a cluster of {@code members} members (local clusters only;
     * an external or container cluster has the size it has).
     *
     * @param members the number of members, at least 1
     * @return a new extension
     * @throws IllegalArgumentException if {@code members < 1}
     */
    public static EtcdExtension cluster(int members) {
        return new EtcdExtension(members, false);
    }

    /**
     * Returns the running cluster.
     *
     * @return the cluster started for the current test class
     * @throws IllegalStateException outside the tests of the class (before {@code beforeAll} or
     *                               after {@code afterAll})
     */
    public EtcdCluster cluster() {
        EtcdCluster current = cluster;
        if (current == null) {
            throw new IllegalStateException("the etcd cluster is not running: register EtcdExtension on a static"
                    + " field with @RegisterExtension and use it from tests of that class");
        }
        return current;
    }

    /**
     * A plain jetcd client on every member of the running cluster ({@link EtcdClaims#client}), for the tests of
     * the class: opened at the first call, closed after the class's last test.
     *
     * @return the class's client
     * @throws IllegalStateException outside the tests of the class, as {@link #cluster()}
     */
    public synchronized Client client() {
        if (client == null) {
            client = EtcdClaims.client(cluster());
        }
        return client;
    }

    /**
     * Starts the cluster, unless an enclosing class already did.
     *
     * @param context the JUnit context of the test class
     */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (testClass == null) {
            testClass = context.getUniqueId();
        }
        if (shared) {
            cluster = context.getRoot()
                    .getStore(SHARED)
                    .getOrComputeIfAbsent("member", k -> EtcdCluster.start(1), EtcdCluster.class);
            return;
        }
        if (cluster == null) {
            cluster = EtcdCluster.start(members);
            owner = context.getUniqueId();
        }
    }

    /**
     * Closes the class's {@link #client()} and the cluster, if they were opened for this class (a shared member is
     * closed when the run ends).
     *
     * @param context the JUnit context of the test class
     */
    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(testClass)) {
            testClass = null;
            if (client != null) {
                try {
                    client.close();
                } finally {
                    client = null;
                }
            }
        }
        if (shared) {
            return;
        }
        if (cluster != null && context.getUniqueId().equals(owner)) {
            try {
                cluster.close();
            } finally {
                cluster = null;
                owner = null;
            }
        }
    }

    /**
     * Supports parameters of type {@link EtcdCluster}.
     *
     * @param parameterContext the parameter
     * @param extensionContext the JUnit context
     * @return whether the parameter is an {@link EtcdCluster}
     */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == EtcdCluster.class;
    }

    /**
     * Resolves an {@link EtcdCluster} parameter to the running cluster.
     *
     * @param parameterContext the parameter
     * @param extensionContext the JUnit context
     * @return {@link #cluster()}
     */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return cluster();
    }
}

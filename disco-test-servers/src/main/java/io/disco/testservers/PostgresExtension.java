package io.disco.testservers;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that gives test classes one {@link PostgresServer} for the whole test run: the
 * first class that registers it starts the server, every later one uses the same, and it stops when the
 * run ends (JUnit's root store). Tests on it use tables (or databases) of their own.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresExtension PG = PostgresExtension.shared();
 * ... DriverManager.getConnection(PG.server().jdbcUrl(), PG.server().user(), "")
 * }</pre>
 */
public final class PostgresExtension implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(PostgresExtension.class, "shared");

    private volatile PostgresServer server;

    private PostgresExtension() {}

    /** @return an extension on the run's shared server */
    public static PostgresExtension shared() {
        return new PostgresExtension();
    }

    /**
     * Starts the shared server unless it runs already.
     *
     * @param context the JUnit context of the test class
     * @throws IllegalStateException if PostgreSQL is not installed (the message says how to install it)
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        server = context.getRoot()
                .getStore(SHARED)
                .getOrComputeIfAbsent("server", k -> PostgresServer.start(), PostgresServer.class);
    }

    /**
     * @return the running server
     * @throws IllegalStateException outside the tests of a class that registered the extension
     */
    public PostgresServer server() {
        PostgresServer current = server;
        if (current == null) {
            throw new IllegalStateException("PostgreSQL is not running: register PostgresExtension on a static field"
                    + " with @RegisterExtension and use it from tests of that class");
        }
        return current;
    }
}

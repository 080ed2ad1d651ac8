package io.disco.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A real database's connections that run a hook before they prepare each statement, so that a test can put a
 * concurrent writer's commit exactly between two statements of a fenced write: the interleavings that a free
 * race hits once in tens or hundreds of runs, every time. Nothing of the database is replaced; the hook runs
 * on the writer's thread, before the statement is sent.
 */
final class Interleaving {

    /** Runs before a connection prepares {@code sql}. */
    @FunctionalInterface
    interface Hook {
        void before(String sql) throws SQLException;
    }

    private Interleaving() {}

    /** @return {@code real}'s connections, each with {@code hook} */
    static DataSource dataSource(DataSource real, Hook hook) {
        Objects.requireNonNull(hook, "hook");
        return proxy(DataSource.class, real, (method, args) -> {
            Object result = method.invoke(real, args);
            return result instanceof Connection c && method.getName().equals("getConnection")
                    ? connection(c, hook)
                    : result;
        });
    }

    /** @return {@code real}, running {@code hook} before each {@code prepareStatement} */
    static Connection connection(Connection real, Hook hook) {
        return proxy(Connection.class, real, (method, args) -> {
            if (method.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql) {
                hook.before(sql);
            }
            return method.invoke(real, args);
        });
    }

    @FunctionalInterface
    private interface Call {
        Object invoke(Method method, Object[] args) throws Throwable;
    }

    private static <T> T proxy(Class<T> type, T real, Call call) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().equals("equals") && args != null && args.length == 1) {
                return proxy == args[0];
            }
            if (method.getName().equals("hashCode") && args == null) {
                return System.identityHashCode(proxy);
            }
            try {
                return call.invoke(method, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(Interleaving.class.getClassLoader(), new Class<?>[] {type}, handler));
    }
}

package io.disco.fencing.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The parts of {@link GuardFilter} a container does not exercise in the Jetty test. */
class GuardFilterTest {

    @Test
    void withoutInitParameterTheOwnGuardStartsEmpty() throws ServletException {
        GuardFilter f = new GuardFilter();
        f.init(config(Map.of()));
        assertEquals(Optional.empty(), f.guard().highWater());
    }

    @Test
    void malformedInitialTokenFailsInitNamingTheParameter() {
        GuardFilter f = new GuardFilter();
        ServletException e = assertThrows(
                ServletException.class, () -> f.init(config(Map.of(GuardFilter.INITIAL_TOKEN_PARAM, "-1"))));
        assertEquals(
                "init parameter initialToken: fencing token has a sign '-' at index 0: "
                        + "a fencing token is a plain decimal number",
                e.getMessage());
    }

    @Test
    void initialTokenIsRefusedForAFilterConstructedWithAGuard() throws ServletException {
        Guard g = Guard.create();
        GuardFilter f = new GuardFilter(g);
        assertThrows(ServletException.class, () -> f.init(config(Map.of(GuardFilter.INITIAL_TOKEN_PARAM, "5"))));
        f.init(config(Map.of()));
        assertSame(g, f.guard());
    }

    @Test
    void guardIsUnavailableBeforeInitOfAFilterCreatedByClassName() {
        assertThrows(IllegalStateException.class, () -> new GuardFilter().guard());
    }

    @Test
    void nonHttpRequestsFailAndNeverReachTheChain() {
        Guard g = Guard.withInitialToken(FencingToken.of(3));
        GuardFilter f = new GuardFilter(g);
        AtomicInteger chainCalls = new AtomicInteger();
        FilterChain chain = (req, resp) -> chainCalls.incrementAndGet();
        ServletException e = assertThrows(
                ServletException.class,
                () -> f.doFilter(stub(ServletRequest.class), stub(ServletResponse.class), chain));
        assertEquals(0, chainCalls.get());
        assertTrue(e.getMessage().startsWith("GuardFilter guards HTTP requests only"));
        assertEquals(Optional.of(FencingToken.of(3)), g.highWater());
    }

    private static FilterConfig config(Map<String, String> params) {
        return (FilterConfig) Proxy.newProxyInstance(
                GuardFilterTest.class.getClassLoader(), new Class<?>[] {FilterConfig.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getInitParameter")) {
                        return params.get((String) args[0]);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private static <T> T stub(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(
                GuardFilterTest.class.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                }));
    }
}

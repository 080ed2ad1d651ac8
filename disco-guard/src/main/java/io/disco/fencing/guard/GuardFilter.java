package io.disco.fencing.guard;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;

/**
 * A jakarta servlet {@link Filter} that lets a request through only if its {@value FencingHttp#HEADER}
 * header carries a token its {@link Guard} accepts.
 *
 * <p>For each request:
 * <ul>
 *   <li>no header, more than one header, or a value {@link FencingHttp#parseHeader(java.util.List)}
 *       rejects: answered {@code 400 Bad Request};</li>
 *   <li>a token lower than the guard's mark: answered {@code 409 Conflict};</li>
 *   <li>otherwise the token is accepted (the mark advances to it), stored in the request attribute
 *       {@value #TOKEN_ATTRIBUTE}, and the request goes down the chain.</li>
 * </ul>
 * A rejection has a {@code text/plain; charset=utf-8} body with a one-line reason, the chain is not
 * called, and the mark does not change. Whitespace around the header value is stripped by the
 * servlet container (RFC 9110 optional whitespace) before the filter sees it, so {@code " 5"}
 * arrives as {@code 5}; whitespace inside the value is rejected.
 *
 * <p>Requests that are not HTTP requests fail with a {@link ServletException} and never reach the
 * chain: there is no header to check, and letting them through would bypass the guard.
 *
 * <p>Two ways to set it up:
 * <ul>
 *   <li>programmatically, {@link #GuardFilter(Guard) new GuardFilter(guard)}, sharing the guard
 *       with every other path to the same resource;</li>
 *   <li>by class name (web.xml, {@code FilterHolder(GuardFilter.class)}, ...): the public no-arg
 *       constructor, after which {@link #init(FilterConfig)} creates the filter's own guard, seeded
 *       from the optional init parameter {@value #INITIAL_TOKEN_PARAM}.</li>
 * </ul>
 * Map it to the {@code REQUEST} dispatch (the default): every dispatch it is mapped to is a check.
 */
public final class GuardFilter implements Filter {

    /** The request attribute that holds the accepted {@link FencingToken} for the rest of the chain. */
    public static final String TOKEN_ATTRIBUTE = "io.disco.fencing.token";

    /**
     * The filter init parameter that seeds the guard of a filter created by class name: the
     * highest token accepted before a restart, in the form {@link FencingToken#parse(CharSequence)}
     * accepts. Without it the guard starts empty.
     */
    public static final String INITIAL_TOKEN_PARAM = "initialToken";

    private static final String TEXT_PLAIN_UTF8 = "text/plain; charset=utf-8";

    /** Final once the filter is in service: set by the constructor or by {@link #init}. */
    private volatile Guard guard;

    /**
     * A filter that checks tokens against {@code guard}.
     *
     * @param guard the guard of the protected resource
     */
    public GuardFilter(Guard guard) {
        this.guard = Objects.requireNonNull(guard, "guard");
    }

    /**
     * For creation by class name: {@link #init(FilterConfig)} then creates the filter's guard.
     */
    public GuardFilter() {
    }

    /**
     * Creates this filter's guard if it was created by class name, seeded from the init parameter
     * {@value #INITIAL_TOKEN_PARAM} when present.
     *
     * @param config the filter configuration
     * @throws ServletException if {@value #INITIAL_TOKEN_PARAM} is malformed, or is given to a filter
     *     constructed with a guard (whose mark it could not apply)
     */
    @Override
    public void init(FilterConfig config) throws ServletException {
        String initial = config.getInitParameter(INITIAL_TOKEN_PARAM);
        if (guard != null) {
            if (initial != null) {
                throw new ServletException("init parameter " + INITIAL_TOKEN_PARAM
                        + " applies only to a GuardFilter created by class name; seed the Guard instead");
            }
            return;
        }
        if (initial == null) {
            guard = Guard.create();
            return;
        }
        try {
            guard = Guard.withInitialToken(FencingToken.parse(initial));
        } catch (MalformedTokenException e) {
            throw new ServletException("init parameter " + INITIAL_TOKEN_PARAM + ": " + e.getMessage(), e);
        }
    }

    /**
     * The guard this filter checks tokens against.
     *
     * @return the guard
     * @throws IllegalStateException if the filter was created by class name and not yet initialised
     */
    public Guard guard() {
        Guard g = guard;
        if (g == null) {
            throw new IllegalStateException("GuardFilter created by class name has not been initialised");
        }
        return g;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
            throw new ServletException("GuardFilter guards HTTP requests only, got " + request.getClass().getName());
        }
        HttpServletRequest http = (HttpServletRequest) request;
        Enumeration<String> headers = http.getHeaders(FencingHttp.HEADER);
        FencingToken token;
        try {
            token = guard().check(FencingHttp.parseHeader(headers == null ? List.of() : Collections.list(headers)));
        } catch (MalformedTokenException e) {
            reject((HttpServletResponse) response, HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return;
        } catch (TokenStaleException e) {
            reject((HttpServletResponse) response, HttpServletResponse.SC_CONFLICT, e.getMessage());
            return;
        }
        request.setAttribute(TOKEN_ATTRIBUTE, token);
        chain.doFilter(request, response);
    }

    private static void reject(HttpServletResponse response, int status, String reason) throws IOException {
        response.setStatus(status);
        response.setContentType(TEXT_PLAIN_UTF8);
        response.getWriter().print(reason + "\n");
    }
}

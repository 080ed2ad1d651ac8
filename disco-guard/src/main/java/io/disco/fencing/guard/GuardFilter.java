package io.disco.fencing.guard;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A jakarta servlet {@link Filter} that lets a request through only if its {@value FencingHttp#HEADER}
 * header carries a token its {@link Guard} admits, and holds the admission until the response is
 * complete, so that requests run in token order (see {@link Guard#admit}).
 *
 * <p>For each request:
 * <ul>
 *   <li>no header, more than one header, or a value {@link FencingHttp#parseHeader(java.util.List)}
 *       rejects: answered {@code 400 Bad Request};</li>
 *   <li>a keyed filter whose key function names no key (null or blank): {@code 400 Bad Request};</li>
 *   <li>a token lower than the guard's mark: answered {@code 409 Conflict};</li>
 *   <li>a token above the coordination service's current revision, for a guard built with an
 *       {@link IssuedBound} ({@link TokenNotIssuedException}): answered {@code 400 Bad Request}, like a
 *       malformed token, because nobody issued it: the client's own error, which retrying with the
 *       same token cannot cure ({@code 409} would tell it that a newer owner holds the resource, and
 *       {@code 503} would invite a retry);</li>
 *   <li>requests with older tokens still running after the guard's drain timeout, the guard's store
 *       failing to persist a higher mark, a token above the confirmed bound that the coordination
 *       service could not confirm in time ({@link BoundUnavailableException}), or the request thread
 *       interrupted while it waits: {@code 503 Service Unavailable} with {@code Retry-After: 1};
 *       nothing of the request ran and the client may retry (older tokens stay rejected, and tokens
 *       at or below the confirmed bound keep being admitted meanwhile);</li>
 *   <li>otherwise the token is admitted (the mark advances to it), stored in the request attribute
 *       {@value #TOKEN_ATTRIBUTE}, and the request goes down the chain. The admission is closed when
 *       the chain returns, or, for a request put in asynchronous mode, when its
 *       {@link jakarta.servlet.AsyncContext} completes ({@code AsyncListener.onComplete}, which the
 *       container also fires after a timeout or an error). Until then, requests with higher tokens
 *       wait (at most the drain timeout); requests with the same token run alongside.</li>
 * </ul>
 * A rejection has a {@code text/plain; charset=utf-8} body with a one-line reason (or whatever the
 * {@link GuardRejections} given to {@link #rejectingWith} writes), the chain is not
 * called, and the mark does not change (except on 503 after a drain timeout: the newer token stays
 * the mark). Whitespace around the header value is stripped by the servlet container (RFC 9110
 * optional whitespace) before the filter sees it, so {@code " 5"} arrives as {@code 5}; whitespace
 * inside the value is rejected.
 *
 * <p>Requests that are not HTTP requests fail with a {@link ServletException} and never reach the
 * chain: there is no header to check, and letting them through would bypass the guard.
 *
 * <p>Three ways to set it up:
 * <ul>
 *   <li>programmatically, {@link #GuardFilter(Guard) new GuardFilter(guard)}, sharing the guard
 *       with every other path to the same resource;</li>
 *   <li>{@link #GuardFilter(KeyedGuard, Function) new GuardFilter(keyedGuard, keyOf)} for one mark per
 *       resource key, named by a function of the request (a path segment, a header);</li>
 *   <li>by class name (web.xml, {@code FilterHolder(GuardFilter.class)}, ...): the public no-arg
 *       constructor, after which {@link #init(FilterConfig)} creates the filter's own guard, seeded
 *       from the optional init parameter {@value #INITIAL_TOKEN_PARAM}. That guard has no
 *       {@link IssuedBound} (an init parameter cannot build one), so a token nobody issued can poison
 *       its mark: prefer the constructors with a guard built with {@link Guard.Builder#issuedBound}.</li>
 * </ul>
 * Map it to the {@code REQUEST} dispatch (the default): every dispatch it is mapped to is an
 * admission, and an {@code ASYNC} re-dispatch of the same request would wait behind itself when a
 * higher token arrived meanwhile.
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

    /** Sent with every 503: the drain is over within the drain timeout, so a retry soon may pass. */
    static final String RETRY_AFTER_SECONDS = "1";

    /** Final once the filter is in service: set by the constructor or by {@link #init}. */
    private volatile Guard guard;
    /** Non-null for a keyed filter, which has no single guard. */
    private final KeyedGuard keyed;

    private final Function<HttpServletRequest, String> keyOf;
    /** How rejections are written; plain text unless {@link #rejectingWith} set another. */
    private volatile GuardRejections rejections = GuardFilter::plainText;

    /**
     * A filter that checks tokens against {@code guard}.
     *
     * @param guard the guard of the protected resource
     */
    public GuardFilter(Guard guard) {
        this.guard = Objects.requireNonNull(guard, "guard");
        this.keyed = null;
        this.keyOf = null;
    }

    /**
     * A filter with one mark per resource key: each request is admitted by the guard of the key
     * that {@code keyOf} names for it.
     *
     * @param guards the keyed guard of the protected resources
     * @param keyOf names the key of a request (for example a path segment); a null or blank answer
     *     is answered {@code 400}, an exception propagates to the container
     */
    public GuardFilter(KeyedGuard guards, Function<HttpServletRequest, String> keyOf) {
        this.keyed = Objects.requireNonNull(guards, "guards");
        this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
    }

    /**
     * For creation by class name: {@link #init(FilterConfig)} then creates the filter's guard.
     */
    public GuardFilter() {
        this.keyed = null;
        this.keyOf = null;
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
        if (guard != null || keyed != null) {
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
     * The guard this filter admits requests with.
     *
     * @return the guard
     * @throws IllegalStateException if the filter was created by class name and not yet initialised,
     *     or is keyed (it has a guard per key)
     */
    public Guard guard() {
        if (keyed != null) {
            throw new IllegalStateException("a keyed GuardFilter has one guard per key");
        }
        Guard g = guard;
        if (g == null) {
            throw new IllegalStateException("GuardFilter created by class name has not been initialised");
        }
        return g;
    }

    /**
     * Makes this filter write its rejections with {@code rejections} instead of the plain-text default
     * (for example as RFC 9457 problem details). Call it before the filter is in service.
     *
     * @param rejections how to answer a rejected request
     * @return this filter
     * @throws NullPointerException if {@code rejections} is null
     */
    public GuardFilter rejectingWith(GuardRejections rejections) {
        this.rejections = Objects.requireNonNull(rejections, "rejections");
        return this;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
            throw new ServletException("GuardFilter guards HTTP requests only, got "
                    + request.getClass().getName());
        }
        HttpServletRequest http = (HttpServletRequest) request;
        HttpServletResponse answer = (HttpServletResponse) response;
        Enumeration<String> headers = http.getHeaders(FencingHttp.HEADER);
        Guard.Admission admission;
        try {
            FencingToken token = FencingHttp.parseHeader(headers == null ? List.of() : Collections.list(headers));
            Guard g = guardOf(http);
            if (g == null) {
                malformed();
                reject(
                        http,
                        answer,
                        new GuardRejection(
                                HttpServletResponse.SC_BAD_REQUEST,
                                GuardRejection.Reason.NO_KEY,
                                "no resource key in this request",
                                Optional.of(token),
                                Optional.empty()));
                return;
            }
            admission = g.admit(token);
        } catch (MalformedTokenException
                | TokenStaleException
                | TokenNotIssuedException
                | DrainTimeoutException
                | BoundUnavailableException
                | UncheckedIOException
                | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            } else if (e instanceof MalformedTokenException) {
                malformed();
            }
            GuardRejection rejection = GuardRejection.of(e);
            if (rejection.status() == HttpServletResponse.SC_SERVICE_UNAVAILABLE) {
                answer.setHeader("Retry-After", RETRY_AFTER_SECONDS);
            }
            reject(http, answer, rejection);
            return;
        }
        boolean async = false;
        try {
            request.setAttribute(TOKEN_ATTRIBUTE, admission.token());
            chain.doFilter(request, response);
            async = request.isAsyncStarted();
            if (async) {
                request.getAsyncContext().addListener(new CloseOnComplete(admission));
            }
        } finally {
            if (!async) {
                admission.close();
            }
        }
    }

    private void malformed() {
        if (keyed != null) {
            keyed.malformed();
        } else {
            guard().malformed();
        }
    }

    /** The guard of this request, or null if a keyed filter's function names no key. */
    private Guard guardOf(HttpServletRequest request) {
        if (keyed == null) {
            return guard();
        }
        String key = keyOf.apply(request);
        return key == null || key.isBlank() ? null : keyed.forKey(key);
    }

    private void reject(HttpServletRequest request, HttpServletResponse response, GuardRejection rejection)
            throws IOException {
        rejections.reject(request, response, rejection);
    }

    /** Closes an asynchronous request's admission when its response is complete. */
    private record CloseOnComplete(Guard.Admission admission) implements AsyncListener {
        @Override
        public void onComplete(AsyncEvent event) {
            admission.close();
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // the container completes the request after the timeout: onComplete follows
        }

        @Override
        public void onError(AsyncEvent event) {
            // the container completes the request after the error: onComplete follows
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this); // a restarted async cycle keeps the admission
        }
    }

    /** The default answer: the status and a one-line plain-text reason. */
    private static void plainText(HttpServletRequest request, HttpServletResponse response, GuardRejection rejection)
            throws IOException {
        response.setStatus(rejection.status());
        response.setContentType(TEXT_PLAIN_UTF8);
        response.getWriter().print(rejection.detail() + "\n");
    }
}

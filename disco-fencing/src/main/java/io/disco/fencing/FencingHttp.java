package io.disco.fencing;

import java.net.http.HttpRequest;
import java.util.List;

/**
 * Carries a fencing token in the HTTP header {@value #HEADER}: stamping it on outgoing requests of
 * the JDK {@link java.net.http.HttpClient}, and parsing it on the receiving side.
 *
 * <p>On the wire the header value is the token's canonical decimal form ({@link FencingToken#toString()}),
 * and a request carries exactly one such header.
 */
public final class FencingHttp {

    /** The name of the HTTP header that carries the fencing token. */
    public static final String HEADER = "X-Fencing-Token";

    private static final String FIELD = HEADER + " header";

    private FencingHttp() {}

    /**
     * Sets the {@value #HEADER} header of {@code builder} to {@code token}, replacing any value it
     * already had (so a builder reused across grants never sends two tokens).
     *
     * @param builder the request being built
     * @param token the token of the current grant or leadership
     * @return {@code builder}, for chaining
     */
    public static HttpRequest.Builder inject(HttpRequest.Builder builder, FencingToken token) {
        return builder.setHeader(HEADER, token.toString());
    }

    /**
     * Parses the received values of the {@value #HEADER} header into a token. Exactly one value must
     * be present, and it must be valid for {@link FencingToken#parse(CharSequence)}. A value is taken
     * as the server hands it over (HTTP servers strip the optional whitespace around a field value,
     * RFC 9110 section 5.5, before any application code sees it); values are not split at commas.
     *
     * @param values every value of the header, in order, as received; {@code null} or empty when
     *     the header is absent
     * @return the token
     * @throws MalformedTokenException if the header is missing, repeated, or its value is malformed;
     *     the message says which and is safe to return to the client
     */
    public static FencingToken parseHeader(List<String> values) {
        return FencingToken.parseSingle(values, FIELD);
    }
}

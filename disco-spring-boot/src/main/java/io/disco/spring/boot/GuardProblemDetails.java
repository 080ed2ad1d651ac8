package io.disco.spring.boot;

import io.disco.fencing.guard.GuardRejection;
import io.disco.fencing.guard.GuardRejections;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Locale;

/**
 * Writes a {@code GuardFilter}'s rejections as RFC 9457 problem details ({@code application/problem+json}):
 * {@code type} (one URI per kind, {@link #TYPE_BASE} + {@code stale-token}, {@code malformed-token},
 * {@code missing-key}, {@code token-not-issued}, {@code drain-timeout}, {@code unavailable}), {@code title},
 * {@code status} (409 stale, 400 missing or malformed, 503 drain timeout or unavailable), {@code detail},
 * {@code instance} (the request's path), and the extension members {@code token} and {@code mark} when
 * known. The filter runs before Spring MVC, where no message converter is at hand; the document has these
 * seven scalar members only, so it is written here.
 */
public final class GuardProblemDetails implements GuardRejections {

    /** The common prefix of the problem type URIs. */
    public static final String TYPE_BASE = "https://disco-java.github.io/disco/problems/";

    @Override
    public void reject(HttpServletRequest request, HttpServletResponse response, GuardRejection rejection)
            throws IOException {
        String json = json(rejection, request.getRequestURI());
        response.setStatus(rejection.status());
        response.setCharacterEncoding("UTF-8");
        response.setContentType("application/problem+json");
        response.getWriter().print(json);
    }

    /**
     * @param rejection the rejection
     * @param instance the request's path
     * @return the problem detail document
     */
    static String json(GuardRejection rejection, String instance) {
        String slug = switch (rejection.reason()) {
            case STALE -> "stale-token";
            case MALFORMED -> "malformed-token";
            case NO_KEY -> "missing-key";
            case NOT_ISSUED -> "token-not-issued";
            case DRAIN_TIMEOUT -> "drain-timeout";
            case UNAVAILABLE -> "unavailable";
        };
        String title = switch (rejection.reason()) {
            case STALE -> "Stale fencing token";
            case MALFORMED -> "Missing or malformed fencing token";
            case NO_KEY -> "No resource key in the request";
            case NOT_ISSUED -> "Fencing token not issued";
            case DRAIN_TIMEOUT -> "Older requests still running";
            case UNAVAILABLE -> "Guard unavailable";
        };
        StringBuilder json = new StringBuilder(256).append('{');
        member(json, "type", TYPE_BASE + slug).append(',');
        member(json, "title", title).append(',');
        json.append("\"status\":").append(rejection.status()).append(',');
        member(json, "detail", rejection.detail()).append(',');
        member(json, "instance", instance);
        rejection.token().ifPresent(t -> json.append(",\"token\":").append(t.value()));
        rejection.mark().ifPresent(m -> json.append(",\"mark\":").append(m.value()));
        return json.append('}').toString();
    }

    private static StringBuilder member(StringBuilder json, String name, String value) {
        json.append('"').append(name).append("\":\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        json.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"');
    }
}

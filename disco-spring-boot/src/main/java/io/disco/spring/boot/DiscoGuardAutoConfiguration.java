package io.disco.spring.boot;

import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.GuardStore;
import io.disco.fencing.guard.IssuedBound;
import io.disco.micrometer.DiscoMetrics;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.server.PathContainer;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The guard of this application's own HTTP resources ({@code disco.guard.http.*}): a {@link GuardFilter}
 * registered through a {@link FilterRegistrationBean} on the configured URL patterns only (there is no
 * default: {@code disco.guard.http.url-patterns} is required), one mark for all of them or one per
 * resource key (a path variable or a header), its marks persisted in {@code store.file} if set, its
 * rejections written as RFC 9457 problem details ({@link GuardProblemDetails}). With the backend's
 * {@link IssuedBound} (the {@code discoIssuedBound} bean of etcd's or ZooKeeper's configuration, or the
 * application's own; Redis has none) it rejects tokens the backend never issued ({@code issued-bound}); with {@link DiscoMetrics} it
 * counts its requests under the resource name {@code http}. Registered at the lowest precedence, after
 * security filters, so that a request they reject never moves a mark.
 *
 * <p>In a WebFlux application the same settings make a {@link GuardWebFilter} bean with the same
 * contract; a servlet pattern {@code /orders/*} guards what the path pattern {@code /orders/**} matches.
 */
@AutoConfiguration(after = {DiscoAutoConfiguration.class, DiscoActuatorAutoConfiguration.class})
@ConditionalOnClass({GuardFilter.class, PathPattern.class})
@ConditionalOnBooleanProperty("disco.guard.http.enabled")
@EnableConfigurationProperties(DiscoProperties.class)
public class DiscoGuardAutoConfiguration {

    /** The name of the filter's registration bean (and of the filter in the servlet container). */
    public static final String FILTER_NAME = "discoGuardFilter";

    /** The name of the WebFlux filter bean. */
    public static final String WEB_FILTER_NAME = "discoGuardWebFilter";

    /** The servlet filter. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({FilterRegistrationBean.class, jakarta.servlet.Filter.class})
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    static class Servlet {

        @Bean(FILTER_NAME)
        @ConditionalOnMissingBean(name = FILTER_NAME)
        FilterRegistrationBean<GuardFilter> discoGuardFilter(
                DiscoProperties properties, ObjectProvider<IssuedBound> bound, ObjectProvider<DiscoMetrics> metrics) {
            DiscoProperties.Http http = properties.guard().http();
            Guard.Builder builder = guard(http, bound, metrics);
            GuardFilter filter = switch (http.key().source()) {
                case NONE -> new GuardFilter(builder.build());
                case HEADER -> {
                    String header = http.key().name();
                    yield new GuardFilter(builder.buildKeyed(), request -> request.getHeader(header));
                }
                case PATH_VARIABLE ->
                    new GuardFilter(
                            builder.buildKeyed(),
                            pathVariable(http.key().pattern(), http.key().name()));
            };
            filter.rejectingWith(new GuardProblemDetails());
            FilterRegistrationBean<GuardFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setName(FILTER_NAME);
            registration.setUrlPatterns(http.urlPatterns());
            return registration;
        }
    }

    /** The WebFlux filter. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({WebFilter.class, reactor.core.publisher.Mono.class})
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    static class Reactive {

        @Bean(WEB_FILTER_NAME)
        @ConditionalOnMissingBean(name = WEB_FILTER_NAME)
        GuardWebFilter discoGuardWebFilter(
                DiscoProperties properties, ObjectProvider<IssuedBound> bound, ObjectProvider<DiscoMetrics> metrics) {
            DiscoProperties.Http http = properties.guard().http();
            Guard.Builder builder = guard(http, bound, metrics);
            List<PathPattern> paths = http.urlPatterns().stream()
                    .map(DiscoGuardAutoConfiguration::pathPattern)
                    .toList();
            return switch (http.key().source()) {
                case NONE -> GuardWebFilter.of(paths, builder.build());
                case HEADER -> {
                    String header = http.key().name();
                    yield GuardWebFilter.keyed(
                            paths,
                            builder.buildKeyed(),
                            e -> e.getRequest().getHeaders().getFirst(header));
                }
                case PATH_VARIABLE -> {
                    PathPattern parsed =
                            PathPatternParser.defaultInstance.parse(http.key().pattern());
                    String variable = http.key().name();
                    yield GuardWebFilter.keyed(paths, builder.buildKeyed(), (ServerWebExchange e) -> {
                        PathPattern.PathMatchInfo match =
                                parsed.matchAndExtract(e.getRequest().getPath().pathWithinApplication());
                        return match == null ? null : match.getUriVariables().get(variable);
                    });
                }
            };
        }
    }

    /** A servlet URL pattern as a path pattern: {@code /x/*} guards everything under {@code /x/}. */
    static PathPattern pathPattern(String servletPattern) {
        String p = servletPattern.endsWith("/*") ? servletPattern + "*" : servletPattern;
        return PathPatternParser.defaultInstance.parse(p);
    }

    private static Guard.Builder guard(
            DiscoProperties.Http http, ObjectProvider<IssuedBound> bound, ObjectProvider<DiscoMetrics> metrics) {
        return guard(http.drainTimeout(), http.store(), http.issuedBound(), "http", bound, metrics);
    }

    /** A guard builder with the drain timeout, the store, the issued bound and the metrics (resource {@code name}). */
    static Guard.Builder guard(
            java.time.Duration drainTimeout,
            DiscoProperties.Store store,
            boolean issuedBound,
            String name,
            ObjectProvider<IssuedBound> bound,
            ObjectProvider<DiscoMetrics> metrics) {
        Guard.Builder builder = Guard.builder().drainTimeout(drainTimeout);
        if (store.file() != null) {
            builder.store(GuardStore.file(store.file()));
        }
        if (issuedBound) {
            bound.ifAvailable(builder::issuedBound);
        }
        metrics.ifAvailable(m -> builder.listener(m.guard(name)));
        return builder;
    }

    private static Function<HttpServletRequest, String> pathVariable(String pattern, String variable) {
        PathPattern parsed = PathPatternParser.defaultInstance.parse(pattern);
        return request -> {
            String path =
                    request.getRequestURI().substring(request.getContextPath().length());
            PathPattern.PathMatchInfo match = parsed.matchAndExtract(PathContainer.parsePath(path));
            return match == null ? null : match.getUriVariables().get(variable);
        };
    }
}

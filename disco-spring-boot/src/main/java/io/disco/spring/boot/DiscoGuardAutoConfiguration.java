package io.disco.spring.boot;

import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.GuardStore;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.micrometer.DiscoMetrics;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.etcd.jetcd.Client;
import jakarta.servlet.http.HttpServletRequest;
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
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The guard of this application's own HTTP resources ({@code disco.guard.http.*}): a {@link GuardFilter}
 * registered through a {@link FilterRegistrationBean} on the configured URL patterns only (there is no
 * default: {@code disco.guard.http.url-patterns} is required), one mark for all of them or one per
 * resource key (a path variable or a header), its marks persisted in {@code store.file} if set, its
 * rejections written as RFC 9457 problem details ({@link GuardProblemDetails}). With this application's
 * jetcd client it rejects tokens etcd never issued ({@code issued-bound}); with {@link DiscoMetrics} it
 * counts its requests under the resource name {@code http}. Registered at the lowest precedence, after
 * security filters, so that a request they reject never moves a mark.
 */
@AutoConfiguration(after = {DiscoAutoConfiguration.class, DiscoActuatorAutoConfiguration.class})
@ConditionalOnClass({GuardFilter.class, FilterRegistrationBean.class, PathPattern.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty("disco.guard.http.enabled")
@EnableConfigurationProperties(DiscoProperties.class)
public class DiscoGuardAutoConfiguration {

    /** The name of the filter's registration bean (and of the filter in the servlet container). */
    public static final String FILTER_NAME = "discoGuardFilter";

    /**
     * @param properties {@code disco.guard.http.*}
     * @param client this application's jetcd client, for the issued bound, if any
     * @param metrics the metrics, if any
     * @return the filter's registration
     */
    @Bean(FILTER_NAME)
    @ConditionalOnMissingBean(name = FILTER_NAME)
    public FilterRegistrationBean<GuardFilter> discoGuardFilter(DiscoProperties properties, ObjectProvider<Client> client,
                                                                ObjectProvider<DiscoMetrics> metrics) {
        DiscoProperties.Http http = properties.guard().http();
        Guard.Builder builder = Guard.builder().drainTimeout(http.drainTimeout());
        if (http.store().file() != null) {
            builder.store(GuardStore.file(http.store().file()));
        }
        if (http.issuedBound()) {
            client.ifAvailable(c -> builder.issuedBound(EtcdIssuedBound.of(c)));
        }
        metrics.ifAvailable(m -> builder.listener(m.guard("http")));
        GuardFilter filter = switch (http.key().source()) {
            case NONE -> new GuardFilter(builder.build());
            case HEADER -> {
                String header = http.key().name();
                yield new GuardFilter(builder.buildKeyed(), request -> request.getHeader(header));
            }
            case PATH_VARIABLE -> new GuardFilter(builder.buildKeyed(), pathVariable(http.key().pattern(), http.key().name()));
        };
        filter.rejectingWith(new GuardProblemDetails());
        FilterRegistrationBean<GuardFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName(FILTER_NAME);
        registration.setUrlPatterns(http.urlPatterns());
        return registration;
    }

    private static Function<HttpServletRequest, String> pathVariable(String pattern, String variable) {
        PathPattern parsed = PathPatternParser.defaultInstance.parse(pattern);
        return request -> {
            String path = request.getRequestURI().substring(request.getContextPath().length());
            PathPattern.PathMatchInfo match = parsed.matchAndExtract(PathContainer.parsePath(path));
            return match == null ? null : match.getUriVariables().get(variable);
        };
    }
}

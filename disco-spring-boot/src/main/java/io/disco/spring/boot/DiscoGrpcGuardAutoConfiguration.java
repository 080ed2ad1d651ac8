package io.disco.spring.boot;

import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardServerInterceptor;
import io.disco.fencing.guard.IssuedBound;
import io.disco.micrometer.DiscoMetrics;
import io.grpc.Metadata;
import io.grpc.ServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * With Spring gRPC on the class path and {@code disco.guard.grpc.enabled=true}: the guard's
 * {@link GuardServerInterceptor} as a {@link GlobalServerInterceptor} bean, so that every gRPC service
 * of the application admits only calls whose {@code x-fencing-token} its guard accepts (one mark, or one
 * per {@code disco.guard.grpc.key-metadata} value). Its requests are counted under the resource name
 * {@code grpc} when metrics are on.
 */
@AutoConfiguration(after = {DiscoAutoConfiguration.class, DiscoActuatorAutoConfiguration.class})
@ConditionalOnClass({GuardServerInterceptor.class, ServerInterceptor.class, GlobalServerInterceptor.class})
@ConditionalOnBooleanProperty("disco.guard.grpc.enabled")
@EnableConfigurationProperties(DiscoProperties.class)
public class DiscoGrpcGuardAutoConfiguration {

    /** The interceptor bean's name. */
    public static final String INTERCEPTOR_NAME = "discoGuardServerInterceptor";

    /**
     * @param properties {@code disco.guard.grpc.*}
     * @param bound the backend's issued bound, if any
     * @param metrics the metrics, if any
     * @return the interceptor, global to Spring gRPC's servers
     */
    @Bean(INTERCEPTOR_NAME)
    @GlobalServerInterceptor
    @ConditionalOnMissingBean(name = INTERCEPTOR_NAME)
    public GuardServerInterceptor discoGuardServerInterceptor(
            DiscoProperties properties, ObjectProvider<IssuedBound> bound, ObjectProvider<DiscoMetrics> metrics) {
        DiscoProperties.Grpc grpc = properties.guard().grpc();
        Guard.Builder builder = DiscoGuardAutoConfiguration.guard(
                grpc.drainTimeout(), grpc.store(), grpc.issuedBound(), "grpc", bound, metrics);
        if (grpc.keyMetadata() == null || grpc.keyMetadata().isBlank()) {
            return new GuardServerInterceptor(builder.build());
        }
        Metadata.Key<String> key = Metadata.Key.of(grpc.keyMetadata(), Metadata.ASCII_STRING_MARSHALLER);
        return new GuardServerInterceptor(builder.buildKeyed(), (call, headers) -> headers.get(key));
    }
}

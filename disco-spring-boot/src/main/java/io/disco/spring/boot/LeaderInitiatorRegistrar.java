package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.spring.integration.DiscoLeaderInitiator;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link DiscoLeaderInitiator} bean per role of {@code disco.integration.leader.roles}, named
 * {@value #PREFIX}{@code <role>}, unless a bean of that name is defined already. The roles are bound (and
 * checked) here, when the bean definitions are made, since their number decides the beans.
 */
final class LeaderInitiatorRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

    /** The beans' name prefix. */
    static final String PREFIX = "discoLeaderInitiator.";

    private Environment environment;
    private BeanFactory beanFactory;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, String> bound = Binder.get(environment)
                .bind("disco.integration.leader.roles", Bindable.mapOf(String.class, String.class))
                .orElse(Map.of());
        DiscoIntegrationProperties.Leader leader = new DiscoIntegrationProperties.Leader(bound);
        leader.roles().forEach((role, election) -> {
            String name = PREFIX + role;
            if (registry.containsBeanDefinition(name)) {
                return;
            }
            RootBeanDefinition definition = new RootBeanDefinition(
                    DiscoLeaderInitiator.class,
                    () -> new DiscoLeaderInitiator(beanFactory.getBean(Disco.class), election, role));
            registry.registerBeanDefinition(name, definition);
        });
    }
}

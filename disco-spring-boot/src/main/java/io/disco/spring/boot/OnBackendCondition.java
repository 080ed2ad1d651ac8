package io.disco.spring.boot;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Whether a backend's configuration runs: it is the backend {@link ConfiguredBackends#chosen} chooses, from the
 * application's properties and the beans registered so far (its own and the auto-configurations' before disco's,
 * Spring Boot's Redis connection details among them). Names the types it asks for by their names, so that it holds
 * no class of a backend: it is asked without them on the class path too.
 */
abstract class OnBackendCondition extends SpringBootCondition implements ConfigurationCondition {

    private final ConfiguredBackends.Backend backend;

    OnBackendCondition(ConfiguredBackends.Backend backend) {
        this.backend = backend;
    }

    @Override
    public ConfigurationPhase getConfigurationPhase() {
        return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ConfiguredBackends.Backend chosen =
                ConfiguredBackends.chosen(context.getEnvironment(), context.getBeanFactory());
        String message = "disco's backend is " + (chosen == null ? "none (no candidate)" : chosen.title);
        return chosen == backend ? ConditionOutcome.match(message) : ConditionOutcome.noMatch(message);
    }

    /** etcd is the backend. */
    static final class OnEtcd extends OnBackendCondition {
        OnEtcd() {
            super(ConfiguredBackends.Backend.ETCD);
        }
    }

    /** ZooKeeper is the backend. */
    static final class OnZooKeeper extends OnBackendCondition {
        OnZooKeeper() {
            super(ConfiguredBackends.Backend.ZOOKEEPER);
        }
    }

    /** Redis is the backend. */
    static final class OnRedis extends OnBackendCondition {
        OnRedis() {
            super(ConfiguredBackends.Backend.REDIS);
        }
    }
}

package io.disco.spring.boot;

import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;

/**
 * Whether the application configures ZooKeeper as disco's backend: {@code disco.zookeeper.connect-string} is set,
 * or it defines a {@code CuratorFramework} bean. Then {@link ZooKeeperBackendConfiguration} runs and
 * {@link EtcdBackendConfiguration} does not (unless {@code disco.zookeeper.enabled=false}). The bean is named by its
 * type's name, so that the condition holds no Curator class: it is asked without Curator on the class path too.
 */
class ZooKeeperConfiguredCondition extends AnyNestedCondition {

    /** The type of the application's own ZooKeeper client. */
    static final String CURATOR_FRAMEWORK = "org.apache.curator.framework.CuratorFramework";

    ZooKeeperConfiguredCondition() {
        super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnProperty("disco.zookeeper.connect-string")
    static class ConnectString {}

    @ConditionalOnBean(type = CURATOR_FRAMEWORK)
    static class CuratorFrameworkBean {}
}

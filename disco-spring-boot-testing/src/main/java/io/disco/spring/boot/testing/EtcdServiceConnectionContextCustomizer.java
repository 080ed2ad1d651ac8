package io.disco.spring.boot.testing;

import io.disco.spring.boot.EtcdConnectionDetails;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import java.lang.reflect.Field;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Registers the {@link EtcdConnectionDetails} bean of one {@link EtcdServiceConnection} field; the field is
 * read when the bean is created (the context's load, after the extension started etcd). Equal for equal
 * fields: Spring's context cache shares a context between test classes only when they name the same field.
 */
final class EtcdServiceConnectionContextCustomizer implements ContextCustomizer {

    /** The bean's name. */
    static final String BEAN_NAME = "etcdServiceConnection";

    private final Field field;

    EtcdServiceConnectionContextCustomizer(Field field) {
        this.field = field;
    }

    @Override
    public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
        if (!(context.getBeanFactory() instanceof BeanDefinitionRegistry registry)) {
            throw new IllegalStateException(
                    "@EtcdServiceConnection needs a context whose bean factory is a" + " BeanDefinitionRegistry, got "
                            + context.getBeanFactory().getClass().getName());
        }
        RootBeanDefinition bean = new RootBeanDefinition(EtcdConnectionDetails.class, this::details);
        registry.registerBeanDefinition(BEAN_NAME, bean);
    }

    private EtcdConnectionDetails details() {
        Object value;
        try {
            value = field.get(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read @EtcdServiceConnection field " + field, e);
        }
        if (value instanceof EtcdExtension extension) {
            return EtcdConnectionDetails.of(extension.cluster().endpoints());
        }
        if (value instanceof EtcdCluster cluster) {
            return EtcdConnectionDetails.of(cluster.endpoints());
        }
        throw new IllegalStateException(
                "@EtcdServiceConnection field " + field.getDeclaringClass().getSimpleName() + "." + field.getName()
                        + " is null when the context loads: start the etcd first");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EtcdServiceConnectionContextCustomizer other && other.field.equals(field);
    }

    @Override
    public int hashCode() {
        return field.hashCode();
    }
}

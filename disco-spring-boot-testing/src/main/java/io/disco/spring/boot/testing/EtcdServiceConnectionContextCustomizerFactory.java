package io.disco.spring.boot.testing;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Finds the {@link EtcdServiceConnection} field of a test class (its own, a superclass's, or an enclosing
 * class's for {@code @Nested} tests) and makes the customizer that registers the connection details.
 * Registered in {@code META-INF/spring.factories}, so that every Spring test context consults it.
 */
class EtcdServiceConnectionContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public ContextCustomizer createContextCustomizer(
            Class<?> testClass, List<ContextConfigurationAttributes> configAttributes) {
        List<Field> fields = new ArrayList<>();
        collect(testClass, fields);
        if (fields.isEmpty()) {
            return null;
        }
        if (fields.size() > 1) {
            throw new IllegalStateException("only one @EtcdServiceConnection field per test class, found "
                    + fields.stream()
                            .map(EtcdServiceConnectionContextCustomizerFactory::name)
                            .toList());
        }
        Field field = fields.get(0);
        if (!EtcdExtension.class.isAssignableFrom(field.getType())
                && !EtcdCluster.class.isAssignableFrom(field.getType())) {
            throw new IllegalStateException("@EtcdServiceConnection field " + name(field) + " is a "
                    + field.getType().getName() + ": it must be an EtcdExtension or EtcdCluster");
        }
        if (!Modifier.isStatic(field.getModifiers())) {
            throw new IllegalStateException("@EtcdServiceConnection field " + name(field)
                    + " must be static (the context may outlive the test instance and is shared by its tests)");
        }
        field.setAccessible(true);
        return new EtcdServiceConnectionContextCustomizer(field);
    }

    /** The annotated fields of {@code type}, its superclasses and (for nested tests) its enclosing classes. */
    private static void collect(Class<?> type, List<Field> into) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (f.isAnnotationPresent(EtcdServiceConnection.class)) {
                    into.add(f);
                }
            }
        }
        if (into.isEmpty() && TestContextAnnotationUtils.searchEnclosingClass(type)) {
            collect(type.getEnclosingClass(), into);
        }
    }

    private static String name(Field f) {
        return f.getDeclaringClass().getSimpleName() + "." + f.getName();
    }
}

package io.disco.spring.scheduling;

import java.lang.reflect.Method;
import java.util.Map;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Proxies the beans that have {@link LeaderOnly} methods (before {@code @Scheduled} methods are picked up,
 * so that the scheduler calls the proxy), checks each such method at startup, and registers its election.
 */
final class LeaderOnlyPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final long serialVersionUID = 1L;

    private transient ConfigurableBeanFactory beanFactory;

    LeaderOnlyPostProcessor() {
        setOrder(Ordered.LOWEST_PRECEDENCE - 100); // before ScheduledAnnotationBeanPostProcessor (lowest)
        setBeforeExistingAdvisors(true);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beanFactory = (ConfigurableBeanFactory) beanFactory;
        this.advisor = new DefaultPointcutAdvisor(
                new AnnotationMatchingPointcut(null, LeaderOnly.class, true), new Interceptor(this));
    }

    private LeaderOnlyElections elections() {
        return beanFactory.getBean(LeaderOnlyElections.class);
    }

    private String name(LeaderOnly annotation, Method method) {
        String name = beanFactory.resolveEmbeddedValue(annotation.value());
        if (name == null || name.isBlank() || name.endsWith("/")) {
            throw new IllegalStateException("@LeaderOnly on " + method + " must name an election: not blank and not"
                    + " ending in '/', got '" + name + "'");
        }
        return name;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        Map<Method, LeaderOnly> methods =
                MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<LeaderOnly>)
                        m -> AnnotatedElementUtils.findMergedAnnotation(m, LeaderOnly.class));
        methods.forEach((method, annotation) -> {
            if (method.getReturnType() != void.class) {
                throw new IllegalStateException("@LeaderOnly method " + method + " must return void: a call while this"
                        + " instance does not lead returns without running it");
            }
            elections().election(name(annotation, method));
        });
        return methods.isEmpty() ? bean : super.postProcessAfterInitialization(bean, beanName);
    }

    /** Runs the call in the active term, or skips it. */
    private static final class Interceptor implements MethodInterceptor {

        private final LeaderOnlyPostProcessor processor;

        Interceptor(LeaderOnlyPostProcessor processor) {
            this.processor = processor;
        }

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            Method method = AopUtils.getMostSpecificMethod(
                    invocation.getMethod(),
                    invocation.getThis() == null
                            ? invocation.getMethod().getDeclaringClass()
                            : invocation.getThis().getClass());
            LeaderOnly annotation = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
            if (annotation == null) {
                return invocation.proceed();
            }
            TermRuns runs = processor
                    .elections()
                    .leading(processor.name(annotation, method))
                    .orElse(null);
            if (runs == null || !runs.enter()) {
                return null; // not the leader: skipped
            }
            CurrentTerm.enter(runs.term);
            try {
                return invocation.proceed();
            } finally {
                CurrentTerm.leave();
                runs.leave();
            }
        }
    }
}

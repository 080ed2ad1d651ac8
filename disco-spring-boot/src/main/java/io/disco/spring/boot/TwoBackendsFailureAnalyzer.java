package io.disco.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Boot's failure analysis of an application that configures etcd and ZooKeeper at once ({@link TwoBackendsException}):
 * the "APPLICATION FAILED TO START" report names what configures each and how to keep one. Registered in
 * {@code META-INF/spring.factories}.
 */
class TwoBackendsFailureAnalyzer extends AbstractFailureAnalyzer<TwoBackendsException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TwoBackendsException cause) {
        String description = "disco is configured for two backends at once, and a disco client runs on one.\n\n"
                + "etcd: " + String.join("; ", cause.etcd()) + "\n"
                + "ZooKeeper: " + String.join("; ", cause.zooKeeper());
        String action = "Configure one backend. For ZooKeeper, remove disco.etcd.endpoints (and the application's"
                + " jetcd Client or EtcdConnectionDetails bean, if disco is to use it), or set disco.etcd.enabled=false"
                + " to leave such beans to other uses. For etcd, remove disco.zookeeper.connect-string, or set"
                + " disco.zookeeper.enabled=false when the CuratorFramework bean is there for something else.";
        return new FailureAnalysis(description, action, cause);
    }
}

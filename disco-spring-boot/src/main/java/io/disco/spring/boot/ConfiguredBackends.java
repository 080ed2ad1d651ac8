package io.disco.spring.boot;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * What configures each backend in an application, for the refusal of two at once ({@link TwoBackendsException}):
 * etcd's endpoints property and the application's etcd beans (a jetcd {@code Client}, an
 * {@link EtcdConnectionDetails}); ZooKeeper's connect string and the application's {@code CuratorFramework} bean.
 * The beans the starter makes itself are not the application's configuration and are not counted; a backend
 * switched off ({@code disco.<backend>.enabled=false}) counts nothing.
 */
final class ConfiguredBackends {

    /** The starter's own beans of those types. */
    private static final Set<String> OURS =
            Set.of("discoEtcdClient", "discoEtcdConnectionDetails", "discoCuratorFramework");

    private ConfiguredBackends() {}

    /**
     * @param environment the application's properties
     * @param beans the application's bean factory (its definitions, none created)
     * @throws TwoBackendsException naming what configures each, if both etcd and ZooKeeper are configured
     */
    static void refuseTwo(Environment environment, ListableBeanFactory beans) {
        List<String> etcd = etcd(environment, beans);
        List<String> zooKeeper = zooKeeper(environment, beans);
        if (!etcd.isEmpty() && !zooKeeper.isEmpty()) {
            throw new TwoBackendsException(etcd, zooKeeper);
        }
    }

    /** @return what configures etcd: {@code disco.etcd.endpoints=...}, the application's etcd beans; empty if nothing */
    static List<String> etcd(Environment environment, ListableBeanFactory beans) {
        List<String> found = new ArrayList<>();
        if (!enabled(environment, "disco.etcd.enabled")) {
            return found;
        }
        Binder.get(environment)
                .bind("disco.etcd.endpoints", Bindable.listOf(String.class))
                .ifBound(endpoints -> found.add("disco.etcd.endpoints=" + String.join(",", endpoints)));
        found.addAll(beansOf(beans, "io.etcd.jetcd.Client", "the jetcd Client bean"));
        found.addAll(beansOf(beans, EtcdConnectionDetails.class.getName(), "the EtcdConnectionDetails bean"));
        return found;
    }

    /** @return what configures ZooKeeper: {@code disco.zookeeper.connect-string=...}, the application's client bean */
    static List<String> zooKeeper(Environment environment, ListableBeanFactory beans) {
        List<String> found = new ArrayList<>();
        if (!enabled(environment, "disco.zookeeper.enabled")) {
            return found;
        }
        String connectString = environment.getProperty("disco.zookeeper.connect-string");
        if (connectString != null) {
            found.add("disco.zookeeper.connect-string=" + connectString);
        }
        found.addAll(beansOf(beans, ZooKeeperConfiguredCondition.CURATOR_FRAMEWORK, "the CuratorFramework bean"));
        return found;
    }

    private static boolean enabled(Environment environment, String property) {
        return environment.getProperty(property, Boolean.class, true);
    }

    /** The application's beans of {@code type} (none when the type is not on the class path), as {@code what 'name'}. */
    private static List<String> beansOf(ListableBeanFactory beans, String type, String what) {
        ClassLoader loader = ConfiguredBackends.class.getClassLoader();
        if (!ClassUtils.isPresent(type, loader)) {
            return List.of();
        }
        return Arrays.stream(beans.getBeanNamesForType(ClassUtils.resolveClassName(type, loader), true, false))
                .filter(name -> !OURS.contains(name))
                .map(name -> what + " '" + name + "'")
                .toList();
    }
}

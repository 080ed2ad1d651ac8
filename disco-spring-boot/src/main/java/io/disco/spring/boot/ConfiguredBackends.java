package io.disco.spring.boot;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Which backend disco runs on, and what configures each, for the conditions of the backends' configurations
 * ({@link OnBackendCondition}) and the refusal of two at once ({@link TwoBackendsException}). One rule, in this order:
 * <ol>
 *   <li>disco's own configuration of a backend: etcd's endpoints property or the application's etcd beans (a jetcd
 *       {@code Client}, an {@link EtcdConnectionDetails}); ZooKeeper's connect string or the application's
 *       {@code CuratorFramework} bean; any {@code disco.redis.*} property but {@code enabled}. Two
 *       of them at once are refused, naming both;</li>
 *   <li>else Redis when the application has Spring Boot's Redis connection (a {@code DataRedisConnectionDetails} bean:
 *       {@code spring.data.redis.*}, a service connection), which an application that already uses Redis has;</li>
 *   <li>else etcd, at its default endpoints, as before Redis.</li>
 * </ol>
 * So an application with a Redis cache and {@code disco.etcd.endpoints} stays on etcd, and one with Redis and nothing
 * of disco's runs on that Redis. Only a backend whose provider (and client library) is on the class path and that is
 * not switched off ({@code disco.<backend>.enabled=false}) takes part. The beans the starter makes itself are not the
 * application's configuration and are not counted.
 */
final class ConfiguredBackends {

    /** A backend disco may run on, with the classes it needs on the class path. */
    enum Backend {
        /** etcd: disco-provider-etcd and jetcd. */
        ETCD("etcd", "disco.etcd.enabled", "io.disco.provider.etcd.EtcdProvider", "io.etcd.jetcd.Client"),
        /** ZooKeeper: disco-provider-zookeeper and Curator. */
        ZOOKEEPER(
                "ZooKeeper",
                "disco.zookeeper.enabled",
                "io.disco.provider.zookeeper.ZooKeeperProvider",
                ConfiguredBackends.CURATOR_FRAMEWORK),
        /** Redis: disco-provider-redis, Lettuce and Spring Boot's Redis connection details. */
        REDIS(
                "Redis",
                "disco.redis.enabled",
                "io.disco.provider.redis.RedisProvider",
                "io.lettuce.core.RedisClient",
                ConfiguredBackends.REDIS_CONNECTION_DETAILS);

        /** The backend's name, as reports write it. */
        final String title;

        private final String enabledProperty;
        private final List<String> classes;

        Backend(String title, String enabledProperty, String... classes) {
            this.title = title;
            this.enabledProperty = enabledProperty;
            this.classes = List.of(classes);
        }

        /** @return whether the backend may be chosen: its classes are on the class path and it is not switched off */
        boolean candidate(Environment environment) {
            ClassLoader loader = ConfiguredBackends.class.getClassLoader();
            return environment.getProperty(enabledProperty, Boolean.class, true)
                    && classes.stream().allMatch(c -> ClassUtils.isPresent(c, loader));
        }
    }

    /** The type of the application's own ZooKeeper client. */
    static final String CURATOR_FRAMEWORK = "org.apache.curator.framework.CuratorFramework";

    /** Spring Boot's Redis connection: {@code spring.data.redis.*}, or a service connection. */
    static final String REDIS_CONNECTION_DETAILS =
            "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";

    /** The starter's own beans of the backends' types. */
    private static final Set<String> OURS =
            Set.of("discoEtcdClient", "discoEtcdConnectionDetails", "discoCuratorFramework", "discoRedisClient");

    private ConfiguredBackends() {}

    /**
     * @param environment the application's properties
     * @param beans the application's bean factory (its definitions, none created)
     * @return the backend disco runs on, by the rule above; with two configured at once, the first of them (its
     *     configuration then refuses the two, {@link #refuseTwo}); null when no backend is a candidate
     */
    static Backend chosen(Environment environment, ListableBeanFactory beans) {
        Map<Backend, List<String>> configured = configured(environment, beans);
        if (!configured.isEmpty()) {
            return configured.keySet().iterator().next();
        }
        if (Backend.REDIS.candidate(environment)
                && !beansOf(beans, REDIS_CONNECTION_DETAILS, "").isEmpty()) {
            return Backend.REDIS;
        }
        return Backend.ETCD.candidate(environment) ? Backend.ETCD : null;
    }

    /**
     * @param environment the application's properties
     * @param beans the application's bean factory (its definitions, none created)
     * @throws TwoBackendsException naming what configures each, if two backends or more are configured at once
     */
    static void refuseTwo(Environment environment, ListableBeanFactory beans) {
        Map<Backend, List<String>> configured = configured(environment, beans);
        if (configured.size() > 1) {
            Map<String, List<String>> named = new LinkedHashMap<>();
            configured.forEach((backend, what) -> named.put(backend.title, what));
            throw new TwoBackendsException(named);
        }
    }

    /** @return each candidate backend that disco's configuration names, with what names it: etcd, ZooKeeper, Redis */
    static Map<Backend, List<String>> configured(Environment environment, ListableBeanFactory beans) {
        Map<Backend, List<String>> configured = new LinkedHashMap<>();
        for (Backend backend : Backend.values()) {
            if (!backend.candidate(environment)) {
                continue;
            }
            List<String> what = switch (backend) {
                case ETCD -> etcd(environment, beans);
                case ZOOKEEPER -> zooKeeper(environment, beans);
                case REDIS -> redis(environment);
            };
            if (!what.isEmpty()) {
                configured.put(backend, what);
            }
        }
        return configured;
    }

    /** @return what configures etcd: {@code disco.etcd.endpoints=...}, the application's etcd beans; empty if nothing */
    static List<String> etcd(Environment environment, ListableBeanFactory beans) {
        List<String> found = new ArrayList<>();
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
        String connectString = environment.getProperty("disco.zookeeper.connect-string");
        if (connectString != null) {
            found.add("disco.zookeeper.connect-string=" + connectString);
        }
        found.addAll(beansOf(beans, CURATOR_FRAMEWORK, "the CuratorFramework bean"));
        return found;
    }

    /**
     * @return what configures Redis as disco's backend: every {@code disco.redis.*} property set but {@code enabled}
     *     (Spring Boot's Redis connection alone is not disco's configuration: a cache has it too)
     */
    static List<String> redis(Environment environment) {
        ConfigurationPropertyName prefix = ConfigurationPropertyName.of("disco.redis");
        ConfigurationPropertyName enabled = ConfigurationPropertyName.of("disco.redis.enabled");
        Map<String, String> set = new TreeMap<>();
        ConfigurationPropertySources.get(environment).forEach(source -> {
            if (!(source instanceof IterableConfigurationPropertySource names)) {
                return;
            }
            for (ConfigurationPropertyName name : names) {
                if (prefix.isAncestorOf(name) && !name.equals(enabled) && !set.containsKey(name.toString())) {
                    var property = source.getConfigurationProperty(name);
                    if (property != null) {
                        set.put(name.toString(), String.valueOf(property.getValue()));
                    }
                }
            }
        });
        return set.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
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

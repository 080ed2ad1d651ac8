package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.shedlock.DiscoLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * With ShedLock and disco-shedlock on the class path and a {@link Disco} bean: a {@link DiscoLockProvider}
 * as ShedLock's {@link LockProvider} (locks under {@code disco.shedlock.prefix}), unless the application
 * defines a {@code LockProvider} of its own or sets {@code disco.shedlock.enabled=false}. The application
 * still enables ShedLock itself ({@code @EnableSchedulerLock}), as it chooses its defaults there.
 *
 * <p>Every {@code DiscoLockProvider} bean (this one or the application's) is closed when the context stops,
 * before {@link DiscoLifecycle} closes the client ({@link AdapterShutdown}).
 */
@AutoConfiguration(after = DiscoAutoConfiguration.class)
@ConditionalOnClass({Disco.class, LockProvider.class, DiscoLockProvider.class})
@ConditionalOnBean(Disco.class)
@ConditionalOnBooleanProperty(name = "disco.shedlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DiscoShedLockProperties.class)
public class DiscoShedLockAutoConfiguration {

    /**
     * @param disco the client
     * @param properties {@code disco.shedlock.prefix}
     * @return ShedLock's lock provider; closed before the client
     */
    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    public DiscoLockProvider discoLockProvider(Disco disco, DiscoShedLockProperties properties) {
        return new DiscoLockProvider(disco, properties.prefix());
    }

    @Bean
    @ConditionalOnMissingBean
    AdapterShutdown discoLockProviderShutdown(ObjectProvider<DiscoLockProvider> providers) {
        return new AdapterShutdown(providers);
    }
}

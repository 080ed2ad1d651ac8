package io.disco.spring.boot.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the factory finds, and the clear errors for fields it cannot use. */
class EtcdServiceConnectionMisuseTest {

    private final EtcdServiceConnectionContextCustomizerFactory factory =
            new EtcdServiceConnectionContextCustomizerFactory();

    static class None {}

    static class OnAnExtension {
        @EtcdServiceConnection
        static final EtcdExtension ETCD = EtcdExtension.sharedMember();
    }

    static class Inherited extends OnAnExtension {}

    static class OnACluster {
        @EtcdServiceConnection
        static EtcdCluster cluster;
    }

    static class WrongType {
        @EtcdServiceConnection
        static final String ETCD = "http://127.0.0.1:2379";
    }

    static class NotStatic {
        @EtcdServiceConnection
        final EtcdExtension etcd = EtcdExtension.sharedMember();
    }

    static class Two {
        @EtcdServiceConnection
        static final EtcdExtension A = EtcdExtension.sharedMember();

        @EtcdServiceConnection
        static final EtcdExtension B = EtcdExtension.sharedMember();
    }

    @Test
    void noAnnotatedFieldNoCustomizer() {
        assertThat(factory.createContextCustomizer(None.class, List.of())).isNull();
    }

    @Test
    void anExtensionOrAClusterFieldIsUsedAlsoFromASuperclass() {
        assertThat(factory.createContextCustomizer(OnAnExtension.class, List.of()))
                .isNotNull();
        assertThat(factory.createContextCustomizer(Inherited.class, List.of()))
                .isEqualTo(factory.createContextCustomizer(OnAnExtension.class, List.of()));
        assertThat(factory.createContextCustomizer(OnACluster.class, List.of())).isNotNull();
    }

    @Test
    void aFieldOfAnotherTypeIsRefusedNamingIt() {
        assertThatThrownBy(() -> factory.createContextCustomizer(WrongType.class, List.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("WrongType.ETCD")
                .hasMessageContaining("EtcdExtension or EtcdCluster");
    }

    @Test
    void anInstanceFieldIsRefusedNamingIt() {
        assertThatThrownBy(() -> factory.createContextCustomizer(NotStatic.class, List.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("NotStatic.etcd")
                .hasMessageContaining("static");
    }

    @Test
    void twoFieldsAreRefusedNamingBoth() {
        assertThatThrownBy(() -> factory.createContextCustomizer(Two.class, List.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Two.A")
                .hasMessageContaining("Two.B");
    }
}

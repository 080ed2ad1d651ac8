package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The report's header names the server a run used, and whether that etcd has the lease bug of etcd issues 15247 and
 * 12528 (fixed in 3.4.31 and 3.5.13), which a fault run would otherwise blame on the library.
 */
class ServerLabelTest {

    @Test
    void anEtcdWithTheLeaseBugSaysSo() {
        for (String buggy :
                new String[] {"etcd 3.4.23 at /usr/bin/etcd", "etcd 3.4.30", "etcd 3.5.0", "etcd 3.5.12", "etcd 3.3.27"
                }) {
            assertTrue(EtcdMembers.label(buggy).contains("HAS the lease bug"), buggy);
            assertTrue(EtcdMembers.label(buggy).startsWith(buggy), buggy);
        }
        for (String fixed : new String[] {
            "etcd 3.4.31", "etcd 3.5.13", "etcd 3.5.16 at /root/.cache/disco/apt-trixie/root/usr/bin/etcd", "etcd 3.6.5"
        }) {
            assertTrue(EtcdMembers.label(fixed).contains("without the lease bug"), fixed);
        }
        assertEquals("ZooKeeper 3.9.3", EtcdMembers.label("ZooKeeper 3.9.3"));
    }
}

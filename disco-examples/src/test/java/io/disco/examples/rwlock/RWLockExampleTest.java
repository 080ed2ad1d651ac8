package io.disco.examples.rwlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.rwlock.basic.RWLockExample;
import io.disco.testservers.EtcdExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RWLockExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void readersShareATokenTheWriterWaitsAndTheZombieWriterIsRejected() {
        RWLockExample.Outcome o =
                RWLockExample.run(ETCD.cluster().endpoints(), "/test/examples/rwlock", Duration.ofSeconds(2));
        assertNull(o.failure());
        assertEquals(o.readToken1(), o.readToken2());
        assertTrue(o.readsAccepted());
        assertTrue(o.writerBlockedByReaders());
        assertTrue(o.tokenW1().isNewerThan(o.readToken1()), o.readToken1() + " then " + o.tokenW1());
        assertTrue(o.tokenW2().isNewerThan(o.tokenW1()), o.tokenW1() + " then " + o.tokenW2());
        assertTrue(o.writesAccepted());
        assertTrue(o.zombieRejected());
        assertTrue(o.verdict().ok(), o.verdict().line());
    }
}

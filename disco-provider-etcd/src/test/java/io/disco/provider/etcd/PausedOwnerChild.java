package io.disco.provider.etcd;

import io.disco.client.Disco;
import io.disco.client.FencedReadWriteLock;
import io.disco.client.FencedSemaphore;
import io.disco.lock.FencedLock;
import io.etcd.jetcd.Client;
import java.time.Duration;

/**
 * A process that holds a lock, a read lock and a semaphore permit through a {@link Disco} with a 2 s TTL,
 * prints their tokens ({@code TOKENS lock=.. read=.. permit=..}) and {@code HELD}, and then waits for its
 * standard input to close; the test pauses it meanwhile (SIGSTOP) past its TTL, as a long GC pause would.
 *
 * <p>Arguments: endpoints (comma-separated), the names' prefix.
 */
public final class PausedOwnerChild {

    private PausedOwnerChild() {}

    public static void main(String[] args) throws Exception {
        EtcdOptions options = Etcd.options(2, 2);
        try (Client client = Client.builder().endpoints(args[0].split(",")).build();
                Disco disco = EtcdProvider.disco(client, options)) {
            FencedLock lock = disco.lock(args[1] + "/lock");
            FencedReadWriteLock rw = disco.readWriteLock(args[1] + "/rw");
            FencedSemaphore semaphore = disco.semaphore(args[1] + "/semaphore", 2);
            lock.lock();
            rw.readLock().lock();
            io.disco.semaphore.Permit permit = semaphore.acquire(Duration.ofSeconds(10));
            System.out.println("TOKENS lock=" + lock.token().value() + " read="
                    + rw.readLock().token().value() + " permit="
                    + permit.token().value());
            System.out.println("HELD");
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the test closes our standard input
            }
        }
        System.out.println("END");
    }
}

package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.bytes;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.AccessDeniedException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.options.OptionsUtil;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A wait that cannot succeed must not wait for ever: with etcd authentication on, the read
 * permission of the waiting owner's user is taken away; when the holder's key goes, the waiter's
 * next read is refused, and its lock() fails at once with {@link AccessDeniedException} instead of
 * retrying silently.
 */
class AccessDeniedTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final ByteSequence ROOT = bytes("root");
    private static final ByteSequence ROOT_PW = bytes("root-pw");
    private static final ByteSequence USER = bytes("locker");
    private static final ByteSequence USER_PW = bytes("locker-pw");
    private static final ByteSequence ROLE = bytes("lockers");

    @Test
    void aWaiterWhoseReadPermissionIsTakenAwayFailsPromptly() throws Exception {
        String prefix = uniquePrefix("access-denied");
        ByteSequence from = bytes(prefix + "/");
        ByteSequence to = OptionsUtil.prefixEndOf(from);
        String[] endpoints = ETCD.cluster().endpoints().toArray(String[]::new);
        try (Client setup = Client.builder().endpoints(endpoints).build()) {
            Auth auth = setup.getAuthClient();
            auth.roleAdd(bytes("root")).get(5, SECONDS);
            auth.userAdd(ROOT, ROOT_PW).get(5, SECONDS);
            auth.userGrantRole(ROOT, bytes("root")).get(5, SECONDS);
            auth.roleAdd(ROLE).get(5, SECONDS);
            auth.roleGrantPermission(ROLE, from, to, Permission.Type.READWRITE).get(5, SECONDS);
            auth.userAdd(USER, USER_PW).get(5, SECONDS);
            auth.userGrantRole(USER, ROLE).get(5, SECONDS);
            auth.authEnable().get(5, SECONDS);
        }
        try (Client root = Client.builder()
                .endpoints(endpoints)
                .user(ROOT)
                .password(ROOT_PW)
                .build()) {
            try (Client a = Client.builder()
                            .endpoints(endpoints)
                            .user(USER)
                            .password(USER_PW)
                            .build();
                    Client b = Client.builder()
                            .endpoints(endpoints)
                            .user(USER)
                            .password(USER_PW)
                            .build();
                    LockService holder = EtcdProvider.newLock(a, prefix, Etcd.ttl(30));
                    // The wait reads its own key once per request timeout: 2 s here.
                    LockService waiter = EtcdProvider.newLock(b, prefix, Etcd.options(30, 2))) {
                holder.lock();
                CompletableFuture<Grant> waiting = waiter.lockAsync();
                org.awaitility.Awaitility.await()
                        .atMost(java.time.Duration.ofSeconds(5))
                        .until(() -> root.getKVClient()
                                        .get(
                                                from,
                                                io.etcd.jetcd.options.GetOption.builder()
                                                        .isPrefix(true)
                                                        .build())
                                        .get(5, SECONDS)
                                        .getCount()
                                == 2);
                // Write stays (so leases can still be revoked), read goes.
                root.getAuthClient().roleRevokePermission(ROLE, from, to).get(5, SECONDS);
                root.getAuthClient()
                        .roleGrantPermission(ROLE, from, to, Permission.Type.WRITE)
                        .get(5, SECONDS);
                // Nothing changes in the queue: the waiter, which would wait for a change it can no longer read,
                // learns of the lost permission from its periodic read of its own key.
                assertTrue(holder.held().isPresent());
                ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, SECONDS));
                System.out.println("waiter without read permission: " + e.getCause());
                assertInstanceOf(AccessDeniedException.class, e.getCause());
            } finally {
                root.getAuthClient().authDisable().get(5, SECONDS);
            }
        }
    }
}

package io.disco.contract;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.client.Disco;
import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.election.LeaderTask;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;

/**
 * What every contract class shares: the backend, the owners and runners a test opened (closed after it), unique
 * names, and the waits on keys. Extend a contract class, not this one.
 */
public abstract class ContractSupport {

    /** The default wait for something that should happen at once (a key to appear, a grant to arrive). */
    protected static final Duration SOON = Duration.ofSeconds(5);

    /**
     * Runs each task on a new daemon thread: for the tests' tasks that block (a second acquirer, a
     * closer). Not the default async pool: since JDK 25 {@code CompletableFuture} runs its default
     * async tasks on the common pool even at parallelism 1 (2 cores), where one blocked task starves
     * the next; JDK 17 gave each a thread of its own there.
     */
    protected static final Executor THREADS = task -> {
        Thread t = new Thread(task);
        t.setDaemon(true);
        t.start();
    };

    private final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();

    /**
     * The backend under test, with its test hooks: what the provider hands out for tests (etcd:
     * {@code EtcdProvider.testableBackend}; ZooKeeper: {@code ZooKeeperDiscoBackend}). Called by every test; return
     * the same started backend each time, shared by every test of a run (the kit never closes it).
     *
     * @return the backend
     */
    protected abstract TestableBackend backend();

    /**
     * Opens an owner with its own lease (session) of {@code ttlSeconds} ({@link TestableBackend#open(Duration)}),
     * independent of every other owner as another process's would be, closed after the test. Two owners contend as
     * two processes would; {@link TestableBackend#freeze} and {@link TestableBackend#endOwner} act on it.
     *
     * @param ttlSeconds the lease's time to live in seconds
     * @return the new owner
     */
    protected final DiscoBackend.Owner owner(int ttlSeconds) {
        DiscoBackend.Owner owner = backend().open(Duration.ofSeconds(ttlSeconds));
        opened.add(owner);
        return owner;
    }

    /**
     * Creates a client ({@link Disco}) on the backend ({@link TestableBackend#withTtl}), whose owners have leases of
     * {@code ttlSeconds}, closed after the test.
     *
     * @param ttlSeconds each owner's lease time to live in seconds
     * @return the new client
     */
    protected final Disco client(int ttlSeconds) {
        Disco client = Disco.over(backend().withTtl(Duration.ofSeconds(ttlSeconds)));
        opened.add(client);
        return client;
    }

    /**
     * Closes {@code closeable} after the test, with the owners and clients the test opened.
     *
     * @param closeable what the test opened
     * @param <T>       its type
     * @return {@code closeable}
     */
    protected final <T extends AutoCloseable> T track(T closeable) {
        opened.add(closeable);
        return closeable;
    }

    /**
     * Starts a leadership runner through the backend, with its own lease of {@code ttlSeconds}, closed after
     * the test.
     *
     * @param name       the election's name
     * @param options    the runner's options
     * @param ttlSeconds the lease's time to live in seconds
     * @return the started runner
     */
    protected final LeadershipRunner runner(String name, LeadershipRunner.Options options, int ttlSeconds) {
        LeadershipRunner runner = backend().newLeadershipRunner(name, options, Duration.ofSeconds(ttlSeconds));
        opened.add(runner);
        return runner;
    }

    /**
     * A name no other test uses.
     *
     * @param what a readable hint of the test
     * @return a fresh name
     */
    protected String uniqueName(String what) {
        return "/contract/" + what + "/" + UUID.randomUUID();
    }

    /**
     * The keys the owners on {@code name} hold ({@link TestableBackend#keys(String)}).
     *
     * @param name the primitive's name
     * @return the keys, sorted
     * @throws Exception if the backend cannot be read
     */
    protected final List<String> keys(String name) throws Exception {
        return backend().keys(name);
    }

    /**
     * Asserts that exactly {@code expected} are held on {@code name}.
     *
     * @param name     the primitive's name
     * @param expected the keys of the current holders
     * @throws Exception if the backend cannot be read
     */
    protected final void assertKeys(String name, String... expected) throws Exception {
        List<String> sorted = new ArrayList<>(List.of(expected));
        Collections.sort(sorted);
        assertEquals(sorted, keys(name), "keys on " + name);
    }

    /**
     * Waits (at most {@link #SOON}) until {@code count} keys are held on {@code name}.
     *
     * @param name  the primitive's name
     * @param count the number of keys
     */
    protected final void awaitKeyCount(String name, int count) {
        await().pollInterval(Duration.ofMillis(20))
                .atMost(SOON)
                .until(() -> keys(name).size() == count);
    }

    /**
     * Waits (at most {@link #SOON}) until exactly {@code expected} are held on {@code name}.
     *
     * @param name     the primitive's name
     * @param expected the keys
     */
    protected final void awaitKeys(String name, List<String> expected) {
        List<String> sorted = new ArrayList<>(expected);
        Collections.sort(sorted);
        await().pollInterval(Duration.ofMillis(20))
                .atMost(SOON)
                .until(() -> keys(name).equals(sorted));
    }

    /**
     * Waits (at most {@link #SOON}) until one key more than {@code before} is held on {@code name}, and returns
     * it: the key of a waiter that just registered.
     *
     * @param name   the primitive's name
     * @param before the keys before the waiter asked
     * @return the waiter's key
     */
    protected final String awaitNewKey(String name, List<String> before) {
        List<String> after = await().pollInterval(Duration.ofMillis(20))
                .atMost(SOON)
                .until(() -> keys(name), k -> k.size() == before.size() + 1 && k.containsAll(before));
        List<String> added = new ArrayList<>(after);
        added.removeAll(before);
        return added.get(0);
    }

    /**
     * Runs {@code task} on a thread of its own ({@link #THREADS}): for a call that blocks, watched through the future.
     *
     * @param task the call
     * @param <T> its result
     * @return completes with the call's result, or its exception
     */
    protected static <T> CompletableFuture<T> onThread(Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        THREADS.execute(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /**
     * Asserts that {@code f} is still pending after giving it a fair chance (300 ms) to complete wrongly.
     *
     * @param f    the pending acquisition
     * @param what what must not have happened yet
     */
    protected static void assertStillWaiting(CompletableFuture<?> f, String what) {
        assertThrows(TimeoutException.class, () -> f.get(300, TimeUnit.MILLISECONDS), what);
    }

    /**
     * Asserts that {@code f} has not completed normally (it may have been cancelled or failed).
     *
     * @param f    an acquisition
     * @param what what must not have happened
     */
    protected static void assertNotGranted(CompletableFuture<?> f, String what) {
        assertFalse(f.isDone() && !f.isCancelled() && !f.isCompletedExceptionally(), what);
    }

    /**
     * Takes {@code lock} on {@code executor}'s thread, reads its token and unlocks.
     *
     * @param lock     the client's lock
     * @param executor where the thread that takes it runs
     * @return the token of that one hold
     */
    static CompletableFuture<FencingToken> tokenOfOneHold(FencedLock lock, Executor executor) {
        return CompletableFuture.supplyAsync(
                () -> {
                    lock.lock();
                    try {
                        return lock.token();
                    } finally {
                        lock.unlock();
                    }
                },
                executor);
    }

    /**
     * A leader task that ignores its signal: it runs until {@code release} opens, however often it is interrupted.
     *
     * @param release  opened to let the task return
     * @param running  true while the task runs
     * @param onSignal run each time the task is interrupted (signalled)
     * @return the task
     */
    static LeaderTask ignoringItsSignal(CountDownLatch release, AtomicBoolean running, Runnable onSignal) {
        return term -> {
            running.set(true);
            while (true) {
                try {
                    if (release.await(1, TimeUnit.MINUTES)) {
                        break;
                    }
                } catch (InterruptedException ignored) {
                    onSignal.run(); // a task that ignores its signal
                }
            }
            running.set(false);
        };
    }

    /**
     * Asserts that a dependent stage of {@code f} ran on no backend thread.
     *
     * @param f a future handed out by a service
     * @throws Exception if the future does not complete in time
     */
    protected final void assertCompletesOffBackendThreads(CompletableFuture<?> f) throws Exception {
        Thread thread = f.handle((v, e) -> Thread.currentThread()).get(10, TimeUnit.SECONDS);
        assertFalse(
                backend().isBackendThread(thread), "a user's stage ran on the backend's thread " + thread.getName());
    }

    /**
     * Closes every runner and owner the test opened, the last opened first.
     *
     * @throws Exception if closing failed
     */
    @AfterEach
    protected final void closeOwners() throws Exception {
        Exception failure = null;
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        opened.clear();
        if (failure != null) {
            throw failure;
        }
    }
}

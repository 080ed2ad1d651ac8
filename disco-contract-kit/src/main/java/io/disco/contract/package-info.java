/**
 * The contract test kit: abstract JUnit 5 tests, one per primitive ({@link io.disco.contract.LockContract},
 * {@link io.disco.contract.RWLockContract}, {@link io.disco.contract.SemaphoreContract},
 * {@link io.disco.contract.ElectionContract}, {@link io.disco.contract.LeadershipRunnerContract},
 * {@link io.disco.contract.FencedLockContract}, {@link io.disco.contract.BarrierContract},
 * {@link io.disco.contract.DoubleBarrierContract}), plus the thread rules of one owner
 * ({@link io.disco.contract.OwnerContract}) and the rules every primitive keeps alike: names, timeouts,
 * interruption and the client's status ({@link io.disco.contract.UniformRulesContract}), and the client's bound
 * on waiting for an unreachable backend ({@link io.disco.contract.UnreachableBackendContract}), written against the public interfaces only. They are the
 * executable statement of the contract that every backend keeps: exclusion, strictly increasing fencing tokens,
 * a zombie's token rejected by the guard, every way of giving up leaving no key, a waiter whose lease ends never
 * winning, loss reported through {@code done()}/{@code err()}, clear errors for bad input, close, and user code
 * that never stalls a lease.
 *
 * <p>A backend runs the kit with its provider's {@link io.disco.client.TestableBackend}, the client's backend SPI
 * with the hooks of tests (open an independent owner with a given TTL, freeze it, end it from outside, list the keys
 * on a name, delete a key as an operator would, ...), by extending each contract class:
 * <pre>{@code
 * class MyLockContractTest extends LockContract {
 *     @Override
 *     protected TestableBackend backend() {
 *         return MY_BACKEND; // started once for the test run
 *     }
 * }
 * }</pre>
 * The two contracts about a client cut off from its servers also ask for a client's backend whose link the kit can
 * stall or cut ({@link io.disco.contract.UnconfirmedReleaseContract#stallableBackend},
 * {@link io.disco.contract.UnreachableBackendContract#unreachableBackend}).
 * A user's own wrapper around a {@code LockService} runs it the same way, with a backend whose owners hand out
 * the wrapped services.
 */
package io.disco.contract;

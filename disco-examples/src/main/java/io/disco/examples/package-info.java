/**
 * Runnable zombie scenarios, one main each, and the {@link io.disco.examples.Demo} that runs them
 * all against a throwaway etcd.
 *
 * <p>Every scenario tells the same story: owner A holds the lock and writes with its fencing token;
 * A freezes (its session is orphaned, so its lease expires without A noticing); B acquires the lock
 * with a higher token and writes; A wakes up and writes with its old token, and the resource rejects
 * it. Each ends with one {@code VERDICT} line and a non-zero exit status if the zombie got through or
 * a step failed.
 */
package io.disco.examples;

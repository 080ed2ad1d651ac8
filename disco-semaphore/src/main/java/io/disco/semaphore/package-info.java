/**
 * A distributed counting semaphore whose permits carry fencing tokens a guard can check per slot:
 * {@link io.disco.semaphore.SemaphoreService}, {@link io.disco.semaphore.Permit}. Backend-neutral;
 * the etcd implementation is in {@code disco-provider-etcd}.
 */
package io.disco.semaphore;

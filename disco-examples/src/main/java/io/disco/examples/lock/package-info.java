/**
 * The lock zombie scenarios ({@code lock/db}, {@code lock/http}, {@code lock/grpc}) and the story
 * they share, {@link io.disco.examples.lock.LockZombie}.
 */
package io.disco.examples.lock;

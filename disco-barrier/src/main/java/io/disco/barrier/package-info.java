/**
 * Distributed barriers: {@link io.disco.barrier.Barrier}, a gate one process holds up while others wait for it to
 * fall, and {@link io.disco.barrier.DoubleBarrier}, where a fixed number of participants enter together and leave
 * together. Backend-neutral; a client ({@code io.disco.client.Disco#barrier}) hands them out on any backend.
 */
package io.disco.barrier;

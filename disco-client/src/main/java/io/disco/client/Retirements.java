package io.disco.client;

import java.util.concurrent.CompletableFuture;

/**
 * The lost services of the client's names that are still closing, by name: what an {@link Entry} needs of the
 * client's {@link Registry}, and nothing more. A lost service may still hold its place on the owner (for etcd: a
 * key being deleted), so the next service of its name waits for that close before it claims.
 */
interface Retirements {

    /**
     * Records that a lost service of {@code name} is closing; forgotten once {@code closing} completes.
     *
     * @param name the name
     * @param closing the close in progress
     */
    void retire(String name, CompletableFuture<Void> closing);

    /**
     * @param name the name
     * @return the close of a lost service of {@code name} still in progress, or null
     */
    CompletableFuture<Void> retiring(String name);
}

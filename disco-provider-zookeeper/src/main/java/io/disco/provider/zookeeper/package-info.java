/**
 * disco on ZooKeeper, through Apache Curator: {@link io.disco.provider.zookeeper.ZooKeeperSession} opens an
 * owner on a started {@code CuratorFramework} (one ZooKeeper session) and creates the services on it. Tokens
 * are the czxids of the owners' own ephemeral-sequential nodes; node names follow Curator's recipes, so a
 * disco lock and Curator's {@code InterProcessMutex} on the same path exclude each other, and a disco election and
 * Curator's {@code LeaderLatch} share one succession.
 */
package io.disco.provider.zookeeper;

/**
 * disco on ZooKeeper, through Apache Curator: {@link io.disco.provider.zookeeper.ZooKeeperSession} opens an
 * owner on a started {@code CuratorFramework} (one ZooKeeper session) and creates the services on it. Tokens
 * are the czxids of the owners' own ephemeral-sequential nodes; node names follow Curator's recipes, so a
 * disco lock and Curator's {@code InterProcessMutex} on the same path exclude each other, and a disco election and
 * Curator's {@code LeaderLatch} share one succession.
 *
 * <p>Inside, one concept per file, each depending only on the ones below it (no loop): the public
 * {@code ZooKeeperSession} is a front over {@code SessionCore}, all a service sees of its session, which wires
 * {@code SessionStatus} (with {@code SessionState}), {@code SessionLiveness}, disco-core's {@code SessionExecutors} and
 * {@code ServiceRegistry} (of {@code SessionMember}s) and knows no kind of service; {@code SessionHandOut} opens
 * it. Each service makes itself on a core ({@code ZkLockService.create} and its siblings) and shares
 * {@code ZkQueueService}: the grant's state in the one grant lifecycle every backend shares (disco-core's internal
 * {@code GrantLedger}, whose hooks are this provider's {@code QueueAttempt}, {@code HeldGrant} and
 * {@code QueueRelease}), its
 * release ({@code GrantRelease}, sent by {@code QueueRelease}) and its loss ({@code GrantLoss}); the acquire
 * machine ({@code QueueAttempt}, {@code QueueWorker}, disco-core's {@code CallerWait}, {@code OwnNode}, {@code QueueNodes})
 * knows the service only as an {@code AttemptOwner} and a primitive only by its hooks ({@code QueueProtocol}).
 * Where the nodes live is {@link io.disco.provider.zookeeper.ZooKeeperNodes}, public because the {@code disco} tool
 * reads the same layout (as {@code EtcdKeys} on etcd), and {@code NodeKind}; the tool lists claimants with
 * {@link io.disco.provider.zookeeper.ZooKeeperSession#claimants(org.apache.curator.framework.CuratorFramework,
 * io.disco.core.Primitive, String)} and says why a server does not answer with
 * {@link io.disco.provider.zookeeper.ZooKeeperEndpoints}.
 */
package io.disco.provider.zookeeper;

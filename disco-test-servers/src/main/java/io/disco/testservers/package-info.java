/**
 * Real etcd for tests, benchmarks and the demo: {@link io.disco.testservers.EtcdCluster} starts local
 * etcd members (one or a cluster, with fault injection) or connects to an existing cluster, and
 * {@link io.disco.testservers.EtcdExtension} runs one per JUnit 5 test class ({@link
 * io.disco.testservers.TlsAndPlainEtcdExtension} a TLS member and a plaintext one, with throwaway certificates); {@link
 * io.disco.testservers.RpcCounter} counts the requests a jetcd client sends it; {@link
 * io.disco.testservers.EtcdClaims} lists the keys queued under a name and revokes its holder's lease; {@link
 * io.disco.testservers.NullArguments} walks a public API calling it with nulls; {@link
 * io.disco.testservers.PostgresServer} starts a throwaway PostgreSQL server ({@link
 * io.disco.testservers.PostgresExtension} shares one across a test run); {@link io.disco.testservers.RedisServer},
 * {@link io.disco.testservers.RedisSentinelSet} and {@link io.disco.testservers.RedisClusterSet} start throwaway
 * redis-server processes (standalone, Sentinel-managed, a cluster) with fault hooks ({@link
 * io.disco.testservers.RedisExtension} shares one of each across a test run); {@link
 * io.disco.testservers.FakeClock} gives a child process (a Redis server, a JVM) a wall clock a test steps; {@link
 * io.disco.testservers.ThreadPerTask} runs a test's blocking tasks each on a thread of its own.
 */
package io.disco.testservers;

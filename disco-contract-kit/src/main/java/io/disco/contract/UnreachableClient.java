package io.disco.contract;

import io.disco.client.DiscoBackend;

/**
 * A client's backend that the kit can cut off from its servers for as long as it likes, for the rules about an
 * unreachable backend: see {@link UnreachableBackendContract#unreachableBackend}.
 *
 * @param backend   the client's backend, with the time to live, request timeout and owner wait the kit asked for
 * @param endpoints how the backend names the servers it connects to (for etcd {@code 127.0.0.1:2379}, for
 *                  ZooKeeper the connect string): every failure of an acquisition for want of an owner must name
 *                  them
 * @param link      the link between that backend and its servers: {@link StallableClient.Link#stall()} cuts it
 *                  (nothing the client sends is answered, new connections hang), for longer than the owners' time
 *                  to live; {@link StallableClient.Link#resume()} restores it
 */
public record UnreachableClient(DiscoBackend backend, String endpoints, StallableClient.Link link) {}

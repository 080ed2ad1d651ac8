/** {@code lock/grpc/client}: the zombie scenario over gRPC. */
package io.disco.examples.lock.grpc.client;

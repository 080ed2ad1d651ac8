/** {@code lock/grpc/pb}: the example resource's gRPC service, defined in Java with JSON messages. */
package io.disco.examples.lock.grpc.pb;

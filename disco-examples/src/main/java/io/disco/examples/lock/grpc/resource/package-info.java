/** {@code lock/grpc/resource}: a gRPC resource guarded by {@code GuardServerInterceptor}. */
package io.disco.examples.lock.grpc.resource;

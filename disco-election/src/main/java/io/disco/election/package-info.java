/**
 * Leader election with fenced leadership terms: {@link io.disco.election.ElectionService},
 * {@link io.disco.election.Leadership} and their errors. Backend-neutral; the etcd implementation
 * lives in {@code io.disco.provider.etcd}.
 */
package io.disco.election;

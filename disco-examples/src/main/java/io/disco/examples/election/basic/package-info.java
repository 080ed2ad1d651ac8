/** {@code election/basic}: a leader, a passive observer, failover, and the stale leader rejected. */
package io.disco.examples.election.basic;

/**
 * A session's threads and services, shared by the providers whose session is one thread and a pool of workers
 * (ZooKeeper, Redis): {@link io.disco.core.internal.session.SessionExecutors}, {@link
 * io.disco.core.internal.session.ServiceRegistry} and {@link io.disco.core.internal.session.SessionMember}. Internal:
 * used by disco-core and the providers only, never by applications.
 */
package io.disco.core.internal.session;

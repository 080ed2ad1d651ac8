/** {@code lock/http/resource}: an HTTP resource on embedded Jetty guarded by {@code GuardFilter}. */
package io.disco.examples.lock.http.resource;

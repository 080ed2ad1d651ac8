/** {@code lock/http/client}: the zombie scenario over HTTP with the JDK {@code HttpClient}. */
package io.disco.examples.lock.http.client;

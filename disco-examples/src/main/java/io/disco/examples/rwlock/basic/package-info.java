/** {@code rwlock/basic}: concurrent readers, an exclusive writer, and a writer zombie rejected. */
package io.disco.examples.rwlock.basic;

/** {@code lock/db}: the fencing check done by the database, in the same transaction as the write. */
package io.disco.examples.lock.db;

/**
 * {@code barrier/basic}: workers held behind a migration's barrier until the migrator lowers it, then a double
 * barrier that lets three workers in together and out together.
 */
package io.disco.examples.barrier;

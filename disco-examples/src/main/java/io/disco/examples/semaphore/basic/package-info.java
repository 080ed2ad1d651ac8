/** {@code semaphore/basic}: three workers, two permits, a frozen worker's write rejected on its slot. */
package io.disco.examples.semaphore.basic;

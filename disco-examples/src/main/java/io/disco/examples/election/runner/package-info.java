/** {@code election/runner}: leadership runners that run a task only while they lead, hand over, and heal after a loss. */
package io.disco.examples.election.runner;

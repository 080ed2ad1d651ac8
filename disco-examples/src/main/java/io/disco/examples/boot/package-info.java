/**
 * {@code boot/two-instances}: two processes of the example Spring Boot application
 * ({@code disco-spring-boot-example}), the leader frozen with SIGSTOP past its TTL; see
 * {@link io.disco.examples.boot.BootExample}. Only the application's classpath is needed here: its classes
 * and Spring stay out of this module.
 */
package io.disco.examples.boot;

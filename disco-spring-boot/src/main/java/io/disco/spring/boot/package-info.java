/**
 * Spring Boot auto-configuration for disco: see {@link io.disco.spring.boot.DiscoAutoConfiguration}.
 */
package io.disco.spring.boot;

/**
 * What this project's providers share to keep the thread model's rule, and no API: the session thread and its
 * refusal of blocking calls ({@link io.disco.core.internal.SessionThread}), the callback executor
 * ({@link io.disco.core.internal.Callbacks}), futures whose dependants never run on a session thread
 * ({@link io.disco.core.internal.UserFuture}) and the batched telling of session events
 * ({@link io.disco.core.internal.SessionEvents}). Public only because the providers live in other modules:
 * applications must not use it, it may change in any release, and an architecture test fails the build when
 * anything outside {@code io.disco.core} and {@code io.disco.provider} uses it.
 */
package io.disco.core.internal;

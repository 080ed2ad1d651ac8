/**
 * The one grant lifecycle every backend's services share (issue 46): where a service's grant stands
 * ({@link io.disco.core.internal.grant.GrantLedger} with its checked {@link io.disco.core.internal.grant.GrantState}),
 * one acquisition at a time, the commit, the release given up at once and confirmed later (issue 44), the loss and
 * the close. A backend supplies its hooks: its acquisition ({@link io.disco.core.internal.grant.Acquisition}), its
 * held grant ({@link io.disco.core.internal.grant.Held}) and its release
 * ({@link io.disco.core.internal.grant.Release}), each saying only what differs between backends (how a claim is
 * created, waited for, deleted). Like the rest of {@code io.disco.core.internal}: no API, for this project's
 * providers only.
 */
package io.disco.core.internal.grant;

package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;

/**
 * What one guard (one key's, in a keyed guard) tells its {@link GuardListener}: every accept and every
 * reject, with the guard's key. Without a listener it tells nobody and costs a null check.
 */
final class GuardEvents {
    private final String key;
    /** Null without a listener. */
    private final GuardListener listener;

    GuardEvents(String key, GuardListener listener) {
        this.key = key;
        this.listener = listener;
    }

    void accepted(FencingToken token) {
        if (listener != null) {
            listener.accepted(key, token);
        }
    }

    void rejected(FencingToken token, GuardListener.Rejection why) {
        if (listener != null) {
            listener.rejected(key, token, why);
        }
    }

    /** Tells of a stale token and returns the exception to throw for it. */
    TokenStaleException stale(FencingToken token, long mark) {
        rejected(token, GuardListener.Rejection.STALE);
        return new TokenStaleException(token, FencingToken.of(mark));
    }
}

package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;

/** The guard tests' fencing tokens: {@code t(5)} for the token of value 5, and a token nobody issued. */
final class Tokens {

    /** The highest token there is: no coordination service issued it, so a bound refuses it. */
    static final FencingToken POISON = FencingToken.of(Long.MAX_VALUE);

    private Tokens() {}

    static FencingToken t(long v) {
        return FencingToken.of(v);
    }
}

package io.disco.election;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.Objects;

/**
 * One leadership term of an election, as won by a candidate or as seen by an observer.
 *
 * <p>{@link #token()} is the fencing token of the term: for etcd, the CreateRevision of the key that
 * won it. A candidate's key is recognised as leader only once every key created before it is gone,
 * so each term's token is strictly greater than the token of every earlier term. The token does not
 * change when the leader {@linkplain ElectionService#proclaim(String) proclaims} a new value: a
 * proclamation is the same term with a new value.
 *
 * <p>A leadership is a value; it does not say whether the term is still running. A leader learns that
 * its term ended involuntarily through {@link ElectionService#done()}, and a resource learns it when
 * a newer leader's token reaches its guard.
 *
 * @param key the backend key of the winning candidate (for etcd: {@code <prefix>/<lease id in hex>})
 * @param value the leader's value (what it campaigned with, or last proclaimed), decoded as UTF-8
 * @param token the fencing token of the term
 */
public record Leadership(String key, String value, FencingToken token) implements Fenced {

    /**
     * @param key the backend key of the winning candidate, not null
     * @param value the leader's value, not null
     * @param token the fencing token of the term, not null
     */
    public Leadership {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(token, "token");
    }

    /**
     * The same term with another value, as after a proclamation.
     *
     * @param newValue the new value, not null
     * @return a leadership with this key and token and {@code newValue}
     */
    public Leadership withValue(String newValue) {
        return new Leadership(key, java.util.Objects.requireNonNull(newValue, "newValue"), token);
    }
}

package io.disco.fencing;

/**
 * Anything that carries a fencing token: a lock grant, a read/write lock grant, a leadership term.
 *
 * <p>The holder must attach {@link #token()} to every request it sends to a guarded resource
 * (see {@link FencingHttp} and {@link FencingGrpc}); the resource rejects requests whose token is
 * lower than the highest it has accepted.
 *
 * <p>It has one method, so a lambda is one too: {@code () -> token} hands a token taken on the holding
 * thread to code that stamps requests elsewhere (Spring's {@code FencingRequestInterceptor.of(() -> token)}).
 */
@FunctionalInterface
public interface Fenced {

    /**
     * The fencing token of this ownership. It never changes for the lifetime of the ownership.
     *
     * @return the token
     */
    FencingToken token();
}

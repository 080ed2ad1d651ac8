package io.disco.spring.scheduling;

import io.disco.election.LeaderTerm;
import io.disco.fencing.FencingToken;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The leadership term a {@link LeaderOnly} method runs in, on the method's thread: its fencing token to
 * send with every write, and whether it is still active.
 */
public final class CurrentTerm {

    private static final ThreadLocal<Deque<LeaderTerm>> TERMS = ThreadLocal.withInitial(ArrayDeque::new);

    private CurrentTerm() {}

    /**
     * The term's token.
     *
     * @return the fencing token of the term the current {@code @LeaderOnly} method runs in; it does not change
     *         when the term ends (a resource rejects it once a newer leader has written)
     * @throws IllegalStateException if the current thread runs no {@code @LeaderOnly} method
     */
    public static FencingToken token() {
        return term().token();
    }

    /**
     * The term, with {@link LeaderTerm#isActive()} and {@link LeaderTerm#ended()}.
     *
     * @return the term the current {@code @LeaderOnly} method runs in (the innermost one)
     * @throws IllegalStateException if the current thread runs no {@code @LeaderOnly} method
     */
    public static LeaderTerm term() {
        return find().orElseThrow(() -> new IllegalStateException(
                "this thread runs no @LeaderOnly method: the term's token is only known inside one"));
    }

    /** @return the term the current {@code @LeaderOnly} method runs in, if it runs one */
    public static Optional<LeaderTerm> find() {
        Deque<LeaderTerm> terms = TERMS.get();
        if (terms.isEmpty()) {
            TERMS.remove();
        }
        return Optional.ofNullable(terms.peekLast());
    }

    static void enter(LeaderTerm term) {
        TERMS.get().addLast(term);
    }

    static void leave() {
        Deque<LeaderTerm> terms = TERMS.get();
        terms.pollLast();
        if (terms.isEmpty()) {
            TERMS.remove();
        }
    }
}

package io.disco.spring.scheduling;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this instance leads the named election; typically a
 * {@code @Scheduled} method, so that of several instances of a service only the leader does the work.
 * Enabled by {@link EnableLeaderOnly}.
 *
 * <pre>{@code
 * @Scheduled(fixedRate = 1000)
 * @LeaderOnly("/elections/billing")
 * void bill() throws InterruptedException {
 *     invoices.send(batch(), CurrentTerm.token()); // the store rejects a token lower than one it has seen
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>Leading.</b> From the application's start, every instance campaigns in each election named by a
 *       {@code @LeaderOnly} method (one disco leadership runner per name, on the context's {@code Disco}
 *       client; it campaigns again after a lost lease). A call while this instance does not lead returns at
 *       once without running the method (which must return {@code void}).</li>
 *   <li><b>Token.</b> While the method runs, {@link CurrentTerm#token()} is the term's fencing token, strictly
 *       greater than every earlier term's of the election, in any instance.</li>
 *   <li><b>End of term.</b> When the term ends (the lease lost or revoked, the runner closed at shutdown), the
 *       thread running the method is interrupted; the term is kept (not resigned) until the method returns,
 *       except when it was lost, where another instance may lead already: a resource that checks the token
 *       rejects what the old term still writes after the new leader's first write.</li>
 * </ul>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /**
     * @return the election's name, a disco name such as {@code /elections/billing}; {@code ${...}}
     *         placeholders are resolved
     */
    String value();
}

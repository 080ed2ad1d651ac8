package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.DiscoService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The claim-again loop of every thread-owned, self-healing handle (the lock, each mode of the read/write lock,
 * the semaphore's permits): one acquisition's claim in the backend, made through what the client claims through
 * at that moment (a {@linkplain Target#unit() unit}: the name's service on the current owner, or a semaphore
 * name's holders on it) and made again through the next one when a loss ends the claim while it waits. A claim
 * lost while it waited held nothing, so claiming again is safe, and it stays within the acquisition's own
 * {@link Wait} and deadline.
 *
 * <p>Its duties, the same for every primitive:
 * <ul>
 *   <li>wait for the unit as the acquisition waits ({@link Wait#await}); while the client has no owner, that
 *       wait fails after the owner wait with {@link BackendUnavailableException}, thrown as it is;</li>
 *   <li>refuse to claim again through a unit that was already lost under this acquisition (a view of one
 *       service, or an owner not replaced yet): the primitive's loss ({@link Target#finished}) is thrown;</li>
 *   <li>claim through the unit ({@link Target#claim}, in the form the {@link Wait} asks for);</li>
 *   <li>tell a loss from a failure ({@link Target#failure}): the primitive's lost exception ends the unit, or
 *       only the claim's own service; a backend failure seen before the loss is known (for etcd: "lease not
 *       found", after a revoke) is taken for the loss if the unit reports one within the grace of
 *       {@link #LOSS_GRACE_NANOS} (at most the acquisition's deadline; interruptible only for
 *       {@link Wait#INTERRUPTIBLY}); anything else is thrown.</li>
 * </ul>
 * What differs per primitive is a {@link Target}'s hooks; {@link #throughServices} gives those of a primitive
 * whose unit is one per-owner service (the lock, the read/write lock).
 */
final class SelfHealingClaim {

    private SelfHealingClaim() {}

    /**
     * A granted claim.
     *
     * @param unit what it was claimed through
     * @param grant what it was granted
     */
    record Granted<U, G>(U unit, G grant) {}

    /** What a failed claim means for the acquisition. */
    enum Failure {
        /** The unit is finished by a loss (its service's lost exception): claim again through the next one, at once. */
        UNIT_LOST,
        /**
         * The claim's own service was lost, perhaps not the unit (a semaphore holder whose key was deleted): claim
         * again, through the next unit if this one reports a loss within the grace, else through the same one.
         */
        CLAIM_LOST,
        /** A backend failure: the unit's loss if the unit reports one within the grace (claim again), else it stands. */
        MAYBE_UNIT_LOST,
        /** Not a loss: thrown at once. */
        FAILED
    }

    /**
     * The hooks of one primitive.
     *
     * @param <U> what a claim is made through
     * @param <G> what a claim grants
     */
    interface Target<U, G> {

        /** @return the unit to claim through now; pending while the client has no owner */
        CompletableFuture<U> unit();

        /**
         * One claim through {@code unit}, waiting as {@code wait} allows until {@code deadline}.
         *
         * @return the grant, or null if {@link Wait#NOT_AT_ALL} found nothing free
         * @throws TimeoutException if the deadline passed (the claim is withdrawn)
         */
        G claim(U unit, Wait wait, long deadline) throws InterruptedException, TimeoutException;

        /** @return whether {@code unit} is finished by a loss: nothing can be claimed through it any more */
        boolean isLost(U unit);

        /** @return a stage that completes when {@code unit} is finished (lost or closed) */
        CompletionStage<?> ended(U unit);

        /** @return what {@code e}, thrown by a claim through {@code unit}, means */
        Failure failure(U unit, RuntimeException e);

        /** @return what to throw when the unit to claim through is the one already lost under this acquisition */
        RuntimeException finished(U unit);
    }

    /** A primitive's claim through one service, in the form {@code wait} asks for (for example {@link Wait#claim} on its acquire methods). */
    @FunctionalInterface
    interface Claimer<S, G> {
        /** @return the grant, or null if {@link Wait#NOT_AT_ALL} found nothing free */
        G claim(S service, Wait wait, long deadline) throws InterruptedException, TimeoutException;
    }

    /**
     * The hooks of a primitive whose unit is one per-owner service: a claim's lost exception
     * ({@code lossType}) finishes that service, and so does a loss the service reports within the grace.
     *
     * @param services the service of the moment
     * @param lossType the primitive's lost exception
     * @param claimer one claim through a service
     */
    static <S extends DiscoService<?, ?>, G> Target<S, G> throughServices(
            Supplier<CompletableFuture<S>> services, Class<? extends DiscoException> lossType, Claimer<S, G> claimer) {
        return new Target<>() {
            @Override
            public CompletableFuture<S> unit() {
                return services.get();
            }

            @Override
            public G claim(S service, Wait wait, long deadline) throws InterruptedException, TimeoutException {
                return claimer.claim(service, wait, deadline);
            }

            @Override
            public boolean isLost(S service) {
                return service.err().isPresent();
            }

            @Override
            public CompletionStage<?> ended(S service) {
                return service.done();
            }

            @Override
            public Failure failure(S service, RuntimeException e) {
                if (lossType.isInstance(e)) {
                    return Failure.UNIT_LOST;
                }
                return e instanceof DiscoException ? Failure.MAYBE_UNIT_LOST : Failure.FAILED;
            }

            @Override
            public RuntimeException finished(S service) {
                return service.err().orElseThrow();
            }
        };
    }

    /**
     * Claims through the unit of the moment until granted, claiming again after each loss.
     *
     * @return the grant and the unit it came through, or null if {@link Wait#NOT_AT_ALL} found nothing free
     * @throws TimeoutException if the deadline passed, or ({@link Wait#NOT_AT_ALL}) there is no unit right now
     * @throws InterruptedException if interrupted while waiting ({@link Wait#INTERRUPTIBLY})
     */
    static <U, G> Granted<U, G> claim(Target<U, G> target, Wait wait, long deadline)
            throws InterruptedException, TimeoutException {
        U lost = null; // the unit lost under this acquisition, if any
        while (true) {
            U unit = wait.await(target.unit(), deadline);
            if (unit == lost && target.isLost(unit)) {
                throw target.finished(unit); // the unit itself is finished: nothing to claim through
            }
            try {
                G grant = target.claim(unit, wait, deadline);
                return grant == null ? null : new Granted<>(unit, grant);
            } catch (RuntimeException e) {
                switch (target.failure(unit, e)) {
                    case UNIT_LOST -> lost = unit;
                    case CLAIM_LOST -> lost = lostWithinGrace(target, unit, wait, deadline) ? unit : null;
                    case MAYBE_UNIT_LOST -> {
                        if (!lostWithinGrace(target, unit, wait, deadline)) {
                            throw e;
                        }
                        lost = unit; // the failure was the loss, seen by the request before the unit's owner
                    }
                    default -> throw e;
                }
            }
        }
    }

    /**
     * How long a claim's failure may wait to turn out to be the loss of the lease. A claim sent between the loss
     * of a lease and the unit noticing it fails with a backend error (for etcd: "lease not found", after a revoke)
     * rather than with the primitive's lost exception; the unit reports the loss soon after, and the failure is
     * then the loss (claimed again through the next owner), not the acquisition's failure.
     */
    static final long LOSS_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Whether {@code unit} reports a loss within {@link #LOSS_GRACE_NANOS}, or the acquisition's
     * {@link Wait#maxWait} if sooner: waits for its end, then asks.
     */
    private static <U> boolean lostWithinGrace(Target<U, ?> target, U unit, Wait wait, long deadline)
            throws InterruptedException {
        long grace = Math.min(LOSS_GRACE_NANOS, wait.maxWait(deadline));
        if (grace > 0) {
            try {
                target.ended(unit).toCompletableFuture().get(grace, TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // not finished: the failure stands
            } catch (InterruptedException e) {
                if (wait == Wait.INTERRUPTIBLY) {
                    throw e;
                }
                Thread.currentThread().interrupt();
            }
        }
        return target.isLost(unit);
    }
}

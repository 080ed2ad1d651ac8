package io.disco.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * What the client promises an {@link AcquisitionObserver}: each acquisition and each hold told once, whichever path
 * tells first; an observer's exception never reaches the acquisition, nor the other observers; and without observers
 * nothing at all (the same two inert watches for every acquisition, nothing made).
 */
class ObserversTest {

    /** Writes down what it is told, as "<observer>: <event>". */
    static final class Notes implements AcquisitionObserver {
        final String who;
        final List<String> told;

        Notes(String who, List<String> told) {
            this.who = who;
            this.told = told;
        }

        @Override
        public Attempt started(Kind kind, String name) {
            told.add(who + ": started " + kind + " " + name);
            return new Attempt() {
                @Override
                public Hold granted(io.disco.fencing.Fenced grant) {
                    told.add(who + ": granted " + grant.token());
                    return new Hold() {
                        @Override
                        public void released() {
                            told.add(who + ": released");
                        }

                        @Override
                        public void lost(Throwable cause) {
                            told.add(who + ": lost " + cause.getMessage());
                        }
                    };
                }

                @Override
                public void ended(Outcome outcome, Throwable cause) {
                    told.add(who + ": ended " + outcome);
                }
            };
        }
    }

    private static Observers of(AcquisitionObserver... observers) {
        DiscoOptions.Builder b = DiscoOptions.builder();
        for (AcquisitionObserver o : observers) {
            b.observer(o);
        }
        return Observers.of(b.build());
    }

    @Test
    void withoutObserversEveryWatchIsTheInertOne() {
        Observers none = Observers.of(DiscoOptions.defaults());
        assertSame(Observers.NONE, none);
        AttemptWatch w = none.start(AcquisitionObserver.Kind.LOCK, "/a");
        assertSame(AttemptWatch.OFF, w);
        HoldWatch h = w.granted(new Grant("/a/1", FencingToken.of(7)));
        assertSame(HoldWatch.OFF, h);
        assertEquals(false, h.isOn());
        h.released();
        h.lost(new IllegalStateException("nobody hears it"));
    }

    @Test
    void anAcquisitionAndItsHoldAreToldOnceInTheObserversOrder() {
        List<String> told = new CopyOnWriteArrayList<>();
        Observers observers = of(new Notes("a", told), new Notes("b", told));
        AttemptWatch w = observers.start(AcquisitionObserver.Kind.SEMAPHORE, "/s");
        HoldWatch h = w.granted(new Grant("/s/1", FencingToken.of(3)));
        w.ended(AcquisitionObserver.Outcome.CANCELLED, null); // a cancellation that came too late: not told
        assertSame(HoldWatch.OFF, w.granted(new Grant("/s/1", FencingToken.of(3))), "granted once");
        h.lost(new IllegalStateException("key deleted"));
        h.released(); // the holder's release after the loss: not told
        h.endedWith(java.util.Optional.empty());
        assertEquals(
                List.of(
                        "a: started SEMAPHORE /s",
                        "b: started SEMAPHORE /s",
                        "a: granted 3",
                        "b: granted 3",
                        "a: lost key deleted",
                        "b: lost key deleted"),
                told);
    }

    @Test
    void anAttemptEndsOnceWhicheverPathEndsItFirst() {
        List<String> told = new CopyOnWriteArrayList<>();
        AttemptWatch w = of(new Notes("a", told)).start(AcquisitionObserver.Kind.LOCK, "/l");
        w.threw(new InterruptedException());
        w.failed(new java.util.concurrent.CancellationException());
        assertEquals(false, w.returned(false, AcquisitionObserver.Outcome.BUSY));
        assertEquals(List.of("a: started LOCK /l", "a: ended INTERRUPTED"), told);

        AttemptWatch cancelled = of(new Notes("b", told)).start(AcquisitionObserver.Kind.LOCK, "/l");
        cancelled.failed(new java.util.concurrent.CancellationException());
        AttemptWatch failed = of(new Notes("c", told)).start(AcquisitionObserver.Kind.LOCK, "/l");
        failed.threw(new IllegalStateException("closed"));
        AttemptWatch busy = of(new Notes("d", told)).start(AcquisitionObserver.Kind.LOCK, "/l");
        busy.returned(false, AcquisitionObserver.Outcome.BUSY);
        assertEquals(
                List.of("b: ended CANCELLED", "c: ended FAILED", "d: ended BUSY"),
                told.stream()
                        .filter(t -> t.contains("ended") && !t.startsWith("a"))
                        .toList());
    }

    @Test
    void anObserverThatThrowsIsSkippedAndTheOthersAreToldStill() {
        List<String> told = new CopyOnWriteArrayList<>();
        AcquisitionObserver throwsAtStart = (kind, name) -> {
            throw new IllegalStateException("bug");
        };
        AcquisitionObserver throwsLater = (kind, name) -> new AcquisitionObserver.Attempt() {
            @Override
            public AcquisitionObserver.Hold granted(io.disco.fencing.Fenced grant) {
                return new AcquisitionObserver.Hold() {
                    @Override
                    public void released() {
                        throw new IllegalStateException("bug at the release");
                    }

                    @Override
                    public void lost(Throwable cause) {
                        throw new IllegalStateException("bug at the loss");
                    }
                };
            }

            @Override
            public void ended(AcquisitionObserver.Outcome outcome, Throwable cause) {
                throw new IllegalStateException("bug at the end");
            }
        };
        Observers observers = of(throwsAtStart, throwsLater, new Notes("n", told));
        HoldWatch h =
                observers.start(AcquisitionObserver.Kind.LOCK, "/x").granted(new Grant("/x/1", FencingToken.of(1)));
        h.released();
        observers.start(AcquisitionObserver.Kind.LOCK, "/x").ended(AcquisitionObserver.Outcome.TIMED_OUT, null);
        assertEquals(
                List.of(
                        "n: started LOCK /x",
                        "n: granted 1",
                        "n: released",
                        "n: started LOCK /x",
                        "n: ended TIMED_OUT"),
                told);
    }
}

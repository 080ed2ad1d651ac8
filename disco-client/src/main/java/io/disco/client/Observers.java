package io.disco.client;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's {@link AcquisitionObserver}s, as its handles use them: {@link #start} an acquisition's
 * {@link AttemptWatch}. Without observers ({@link #NONE}) nothing is called and nothing allocated: every handle
 * gets {@link AttemptWatch#OFF}, every hold {@link HoldWatch#OFF}.
 */
final class Observers {

    private static final Logger LOG = LoggerFactory.getLogger(Observers.class);

    /** No observers: the client's default. */
    static final Observers NONE = new Observers(new AcquisitionObserver[0]);

    private final AcquisitionObserver[] observers;

    private Observers(AcquisitionObserver[] observers) {
        this.observers = observers;
    }

    /** @return the observers of {@code options}; {@link #NONE} without any */
    static Observers of(DiscoOptions options) {
        List<AcquisitionObserver> list = options.observers();
        return list.isEmpty() ? NONE : new Observers(list.toArray(AcquisitionObserver[]::new));
    }

    /** @return whether there is any observer: handles ask before they look for anything to tell */
    boolean on() {
        return observers.length > 0;
    }

    /**
     * An acquisition starts, on the thread that asked: tells every observer.
     *
     * @return its watch; {@link AttemptWatch#OFF} without observers
     */
    AttemptWatch start(AcquisitionObserver.Kind kind, String name) {
        if (observers.length == 0) {
            return AttemptWatch.OFF;
        }
        AcquisitionObserver.Attempt[] attempts = new AcquisitionObserver.Attempt[observers.length];
        for (int i = 0; i < observers.length; i++) {
            try {
                attempts[i] = observers[i].started(kind, name);
            } catch (RuntimeException e) {
                threw(observers[i], e);
            }
        }
        return new AttemptWatch(attempts);
    }

    /** An observer threw: logged, and the acquisition goes on (see {@link AcquisitionObserver}). */
    static void threw(Object observer, RuntimeException e) {
        LOG.warn("the acquisition observer {} threw; ignored", observer, e);
    }
}

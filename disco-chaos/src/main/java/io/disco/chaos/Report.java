package io.disco.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The figures of one run, in the order the checkers put them, and the safety failures among them. */
final class Report {

    final Map<String, Long> figures = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();

    /** A figure for information (liveness): printed, never a failure. */
    void figure(String name, long value) {
        figures.put(name, value);
    }

    /** A safety figure: the run fails unless it is zero. */
    void safety(String name, long count, Object detail) {
        figures.put(name, count);
        if (count > 0) {
            failures.add(name + ": " + count + (detail == null ? "" : " (" + detail + ")"));
        }
    }

    boolean passed() {
        return failures.isEmpty();
    }
}

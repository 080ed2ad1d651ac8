package io.disco.chaos;

/**
 * Checker 9, forged tokens: every request of the {@link Hostile} owner (tokens nobody issued) was
 * refused, at the resource (its history) and as the hostile owner saw it (no {@code 200}); and the
 * hostile owner did send some, so that the check is not empty. Printed: how many were refused as not
 * issued (400), and how many unconfirmed because etcd could not be read in time (503).
 */
final class HostileRequests implements Checker {

    @Override
    public void check(Observations o, Report r) {
        long admitted = 0;
        long notIssued = 0;
        long unconfirmed = 0;
        String first = null;
        for (Observations.Op op : o.ops()) {
            if (!op.owner().equals(Hostile.ID)) {
                continue;
            }
            if (op.accepted()) {
                admitted++;
                first = first == null ? op.toString() : first;
            } else if (op.outcome().equals("unissued")) {
                notIssued++;
            } else if (op.outcome().equals("unconfirmed")) {
                unconfirmed++;
            }
        }
        long sent = 0;
        long answered200 = 0;
        for (Observations.Event e : o.events("HOSTILE")) {
            sent++;
            if (e.args().size() >= 4 && e.args().get(3).equals("200")) {
                answered200++;
                first = first == null ? "answered 200: " + e : first;
            }
        }
        r.safety("hostile requests admitted (tokens nobody issued)", Math.max(admitted, answered200), first);
        r.safety("hostile owner sent no request (the check would be empty)", sent == 0 ? 1 : 0, null);
        r.figure("hostile requests sent", sent);
        r.figure("hostile requests refused: not issued (400)", notIssued);
        r.figure("hostile requests refused: etcd unreachable (503)", unconfirmed);
    }
}

package io.disco.chaos;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checker of hold identity: one fencing token belongs to one hold. Per register and token it collects the holds it
 * was granted to ({@link Observations.Hold#id()}: the client workload's {@code o1.t2.h7}, process, thread and the
 * thread's hold number; else the owner's n-th grant) and the holders the resource accepted an operation of it from
 * (the owner each call names: the hold's identity in the client workload, the process in the others, which hold one
 * grant at a time). A token of two holds fails the run, however the two are related: two processes, or two threads
 * of one process one after the other (issue 44: an unlock that timed out left its grant, token and all, to the
 * process's next thread, while another process was granted the lock with a higher token). Exempt: a read phase's
 * token, which its readers share (a token granted only in shared mode); the {@link Hostile} owner, whose
 * requests {@link HostileRequests} judges.
 */
final class SharedTokens implements Checker {

    @Override
    public void check(Observations o, Report r) {
        Map<String, Set<String>> grantedTo = new LinkedHashMap<>(); // "key token" -> hold ids (exclusive grants)
        Set<String> sharedOnly = new HashSet<>();
        Set<String> exclusive = new HashSet<>();
        for (Observations.Hold h : o.holds()) {
            String k = h.key() + " " + h.token();
            if (h.shared()) {
                sharedOnly.add(k);
            } else {
                exclusive.add(k);
            }
            grantedTo.computeIfAbsent(k, x -> new TreeSet<>()).add(h.id());
        }
        sharedOnly.removeAll(exclusive);
        Map<String, Set<String>> acceptedFor = new LinkedHashMap<>(); // "key token" -> owners the resource accepted
        for (Observations.Op op : o.ops()) {
            if (op.accepted() && !op.owner().equals(Hostile.ID)) {
                acceptedFor
                        .computeIfAbsent(op.key() + " " + op.token(), x -> new TreeSet<>())
                        .add(op.owner());
            }
        }
        Set<String> shared = new TreeSet<>();
        long atGrant = 0;
        long atResource = 0;
        String first = null;
        for (Map.Entry<String, Set<String>> e : grantedTo.entrySet()) {
            if (e.getValue().size() > 1 && !sharedOnly.contains(e.getKey())) {
                atGrant++;
                shared.add(e.getKey());
                first = first == null ? "token " + e.getKey() + " granted to " + e.getValue() : first;
            }
        }
        for (Map.Entry<String, Set<String>> e : acceptedFor.entrySet()) {
            if (e.getValue().size() > 1 && !sharedOnly.contains(e.getKey())) {
                atResource++;
                shared.add(e.getKey());
                first = first == null ? "token " + e.getKey() + " accepted at the resource for " + e.getValue() : first;
            }
        }
        r.figure(
                "holds told apart (a hold id each)",
                o.holds().stream().map(Observations.Hold::id).distinct().count());
        r.figure("tokens granted to two holds", atGrant);
        r.figure("tokens accepted at the resource for two holds", atResource);
        r.safety(
                "one token shared by two holds (granted to, or accepted at the resource for, both)",
                shared.size(),
                first);
    }
}

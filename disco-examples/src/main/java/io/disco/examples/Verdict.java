package io.disco.examples;

/**
 * The outcome of one scenario, printed as its last line.
 *
 * @param scenario the scenario's name, for example {@code lock/http}
 * @param ok whether everything went as the fencing contract says it must (true for a scenario that does not apply)
 * @param summary what happened, in a few words
 * @param applicable false for a scenario that cannot run on the demo's backend (it says why in its summary)
 */
public record Verdict(String scenario, boolean ok, String summary, boolean applicable) {

    /**
     * A verdict of a scenario that ran.
     *
     * @param scenario the scenario's name
     * @param ok whether everything went as the fencing contract says it must
     * @param summary what happened, in a few words
     */
    public Verdict(String scenario, boolean ok, String summary) {
        this(scenario, ok, summary, true);
    }

    /**
     * The verdict of a scenario that does not apply to the backend: it neither passes nor fails.
     *
     * @param scenario the scenario's name
     * @param why why it cannot run there, for example {@code not applicable on ZooKeeper: ...}
     * @return the verdict
     */
    public static Verdict notApplicable(String scenario, String why) {
        return new Verdict(scenario, true, why, false);
    }

    /**
     * @return the verdict line, for example {@code VERDICT lock/http: zombie write rejected (409) — OK}, or
     *     {@code ... — N/A} for a scenario that does not apply
     */
    public String line() {
        return "VERDICT " + scenario + ": " + summary + " — " + (!applicable ? "N/A" : ok ? "OK" : "FAILED");
    }

    /**
     * Prints the verdict line and returns the process exit status it stands for.
     *
     * @return 0 when ok, 1 otherwise
     */
    public int print() {
        Say.OUT.println(line());
        return ok ? 0 : 1;
    }
}

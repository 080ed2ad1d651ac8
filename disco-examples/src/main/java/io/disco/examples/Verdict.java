package io.disco.examples;

/**
 * The outcome of one scenario, printed as its last line.
 *
 * @param scenario the scenario's name, for example {@code lock/http}
 * @param ok whether everything went as the fencing contract says it must
 * @param summary what happened, in a few words
 */
public record Verdict(String scenario, boolean ok, String summary) {

    /** @return the verdict line, for example {@code VERDICT lock/http: zombie write rejected (409) — OK} */
    public String line() {
        return "VERDICT " + scenario + ": " + summary + " — " + (ok ? "OK" : "FAILED");
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

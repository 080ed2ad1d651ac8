package io.disco.examples.bootapp;

import io.disco.fencing.FencingHttp;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The ledger: the guarded resource. It checks no token itself: the starter's guard filter, configured in
 * {@code application.properties} ({@code disco.guard.http.*}: {@code /ledger/*}, one mark per account),
 * lets a write through only if its token is at least the newest the account has seen, and answers
 * anything older with a 409 problem detail before this controller runs.
 */
@RestController
public class LedgerController {

    private final Map<String, List<String>> accounts = new ConcurrentHashMap<>();

    /**
     * Appends an entry to an account (guarded).
     *
     * @param account the account
     * @param token the token the guard admitted
     * @param entry the entry
     * @return what was written
     */
    @PutMapping("/ledger/{account}")
    public String write(
            @PathVariable String account, @RequestHeader(FencingHttp.HEADER) String token, @RequestBody String entry) {
        String line = "token " + token + ": " + entry;
        accounts.computeIfAbsent(account, a -> new CopyOnWriteArrayList<>()).add(line);
        return line;
    }

    /**
     * An account's entries, oldest first (not guarded: outside {@code /ledger/*}).
     *
     * @param account the account
     * @return its entries, one per line
     */
    @GetMapping("/entries/{account}")
    public String entries(@PathVariable String account) {
        return String.join("\n", accounts.getOrDefault(account, List.of()));
    }
}

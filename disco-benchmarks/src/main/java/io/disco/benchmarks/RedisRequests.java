package io.disco.benchmarks;

import io.disco.testservers.RedisServer;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * What the case "redis" counts as Redis requests, read in two ways around a measured stretch:
 *
 * <ul>
 *   <li><b>requests</b>: the commands the case's Lettuce clients send, counted by a {@link CommandListener} on every
 *       client ({@link #count}); a script call ({@code EVALSHA}) is one request, a {@code SUBSCRIBE} one, a connection's
 *       {@code HELLO} one;
 *   <li><b>server commands</b>: the deltas of {@code INFO commandstats} (calls, per command, summed): every command
 *       the server ran, those a script runs included (an {@code EVALSHA} whose script calls {@code INCR} and
 *       {@code SET} is three), and the {@code INFO} of the readings themselves left out.
 * </ul>
 *
 * The case counts what runs during one measured stretch: only the clients of the contestant measured are open then.
 */
final class RedisRequests implements CommandListener {

    private final RedisServer server;
    private final Map<String, LongAdder> sent = new ConcurrentHashMap<>();

    RedisRequests(RedisServer server) {
        this.server = server;
    }

    /** Counts every command {@code client} sends from now on (its connections opened later included). */
    <C extends AbstractRedisClient> C count(C client) {
        client.addListener(this);
        return client;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        sent.computeIfAbsent(event.getCommand().getType().toString(), t -> new LongAdder())
                .increment();
    }

    /** @return the counts now: the commands sent by the counted clients, and the server's command statistics */
    Snapshot snapshot() {
        Map<String, Long> s = new TreeMap<>();
        sent.forEach((type, n) -> s.put(type.toLowerCase(Locale.ROOT), n.sum()));
        Map<String, Long> ran = new TreeMap<>();
        for (String line : ((String) server.command("INFO", "commandstats")).split("\r?\n")) {
            // cmdstat_evalsha:calls=12,usec=...; subcommands as cmdstat_client|setinfo
            if (line.startsWith("cmdstat_")) {
                int colon = line.indexOf(':');
                String name = line.substring("cmdstat_".length(), colon);
                int calls = line.indexOf("calls=", colon);
                int end = line.indexOf(',', calls);
                if (calls > 0 && !name.equals("info")) {
                    ran.put(
                            name,
                            Long.parseLong(line.substring(calls + "calls=".length(), end < 0 ? line.length() : end)));
                }
            }
        }
        return new Snapshot(s, ran);
    }

    /**
     * Counts at one moment, or between two.
     *
     * @param sent commands sent by the counted clients, by lower-case command name
     * @param ran calls by command as {@code INFO commandstats} names them ({@code evalsha}, {@code client|setinfo})
     */
    record Snapshot(Map<String, Long> sent, Map<String, Long> ran) {

        /** @return the counts of this snapshot less those of {@code earlier} (zeros left out) */
        Snapshot minus(Snapshot earlier) {
            return new Snapshot(less(sent, earlier.sent), less(ran, earlier.ran));
        }

        private static Map<String, Long> less(Map<String, Long> now, Map<String, Long> before) {
            Map<String, Long> d = new TreeMap<>();
            now.forEach((name, n) -> {
                long delta = n - before.getOrDefault(name, 0L);
                if (delta != 0) {
                    d.put(name, delta);
                }
            });
            return d;
        }

        /** @return the requests (commands sent) */
        long requests() {
            return sent.values().stream().mapToLong(Long::longValue).sum();
        }

        /** @return the commands the server ran, those in scripts included */
        long commands() {
            return ran.values().stream().mapToLong(Long::longValue).sum();
        }

        /**
         * @return the two readings per {@code per} (acquisitions, or lock+unlock cycles) as a row's figures: {@code
         *     requests}, {@code server_cmds}
         */
        Object[] figures(long per) {
            return new Object[] {"requests", requests() / (double) per, "server_cmds", commands() / (double) per};
        }

        /** @return both readings by command per {@code per}, e.g. {@code sent evalsha 2.00; ran evalsha 2.00, incr 1.00} */
        String breakdown(long per) {
            return "sent " + perName(sent, per) + "; ran " + perName(ran, per);
        }

        private static String perName(Map<String, Long> counts, long per) {
            return counts.isEmpty()
                    ? "nothing"
                    : counts.entrySet().stream()
                            .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue() / (double) per))
                            .collect(Collectors.joining(", "));
        }
    }
}

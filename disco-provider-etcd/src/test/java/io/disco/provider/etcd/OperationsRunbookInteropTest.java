package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.bytes;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every etcdctl recipe of docs/operations.md (the on-call runbook), taken from the page itself and run through
 * {@code bash} with the real etcdctl against a member of its own, on the names the page uses (/locks/orders,
 * /rw/orders, /sem/orders), held by this library. The page's example lease ids and revisions are replaced by the
 * real ones, read the way the page says to read them; nothing else of a command is changed. The etcdctl is the
 * one beside {@code DISCO_ETCD_BINARY} when there is one (the JDK 25 x etcd 3.5 pass of ./test sets it to 3.5's,
 * and this class runs there as an {@code *InteropTest}), else the one on PATH (Debian bookworm's 3.4), and must
 * be of the server's minor version.
 */
class OperationsRunbookInteropTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** The page's example lease ids (the hex suffix of a key). */
    private static final String LEASE_A = "694d8a3c3b7f1a04";

    private static final String LEASE_B = "694d8a3c3b7f1a09";

    /** One marker per recipe: the text that picks it out of the page. A recipe no marker picks fails the test. */
    private static final List<String> MARKERS = List.of(
            "get --prefix /locks/orders/ --sort-by=CREATE",
            "lease timetolive --keys",
            "get disco-rwlock-phase:/rw/orders -w fields",
            "get disco-semaphore-limit:/sem/orders",
            "get --prefix disco-semaphore-slot:/sem/orders/",
            "create(\"/locks/orders/",
            "create(\"/rw/orders/read/",
            "create(\"/sem/orders/",
            "get --prefix disco-rwlock-phase: --keys-only",
            "get --prefix /rw/orders/ --limit 1",
            "get --prefix disco-semaphore-limit: --keys-only",
            "get --prefix disco-semaphore-slot: -w fields",
            "mod(\"disco-rwlock-phase:/rw/orders\")",
            "watch --prefix /locks/orders/");

    private static String page;
    private static List<String> recipes;

    @TempDir
    static Path bin;

    private final List<EtcdSession> sessions = new ArrayList<>();

    @BeforeAll
    static void readThePageAndPickEtcdctl() throws Exception {
        String other = System.getProperty("disco.runbook"); // another version of the page, e.g. an older commit's
        page = Files.readString(other != null ? Path.of(other) : repositoryFile("docs/operations.md"));
        recipes = recipes(page);
        Path etcdctl = etcdctl();
        Files.createSymbolicLink(bin.resolve("etcdctl"), etcdctl);
        String client = run("etcdctl version").out().lines().findFirst().orElse("");
        String server = field(run("etcdctl endpoint status -w fields").out(), "Version");
        System.out.println(
                "[runbook] " + client + " at " + etcdctl + "; etcd " + server + "; " + recipes.size() + " recipes");
        assertTrue(
                client.startsWith("etcdctl version: " + minor(server)),
                "etcdctl (" + client + ", " + etcdctl + ") must be of the server's version " + server);
    }

    /** Each scenario starts from a keyspace without the page's names (a scenario leaves a read phase marker behind). */
    @AfterEach
    void closeSessions() throws Exception {
        sessions.forEach(EtcdSession::close);
        sessions.clear();
        clean();
    }

    static void clean() throws Exception {
        for (String prefix : List.of("/locks/orders/", "/rw/orders/", "/sem/orders/", "disco-")) {
            ETCD.client()
                    .getKVClient()
                    .delete(
                            bytes(prefix),
                            io.etcd.jetcd.options.DeleteOption.builder()
                                    .isPrefix(true)
                                    .build())
                    .get(5, SECONDS);
        }
    }

    // ---- the page's recipes

    /** The commands of the page's {@code sh} blocks that run etcdctl (continuation lines joined; comments dropped). */
    static List<String> recipes(String markdown) {
        List<String> commands = new ArrayList<>();
        boolean sh = false;
        StringBuilder command = null;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                sh = line.equals("```sh");
                continue;
            }
            if (!sh || (command == null && (line.isBlank() || line.strip().startsWith("#")))) {
                continue;
            }
            command = command == null
                    ? new StringBuilder(line)
                    : command.append('\n').append(line);
            if (!line.endsWith("\\")) {
                commands.add(command.toString());
                command = null;
            }
        }
        // the disco tool's own commands are DiscoCliTest's
        return commands.stream().filter(c -> c.matches("(?s).*\\betcdctl .*")).toList();
    }

    /** The one recipe containing {@code marker}. */
    static String recipe(String marker) {
        List<String> found = recipes.stream().filter(r -> r.contains(marker)).toList();
        assertEquals(1, found.size(), "recipes of docs/operations.md containing '" + marker + "': " + found);
        return found.get(0);
    }

    @Test
    void everyEtcdctlRecipeOfThePageIsRunHere() {
        assertTrue(recipes.size() >= MARKERS.size(), recipes.toString());
        for (String r : recipes) {
            List<String> markers = MARKERS.stream().filter(r::contains).toList();
            assertEquals(1, markers.size(), "a recipe of docs/operations.md that no test here runs (or two do): " + r);
        }
    }

    /**
     * The break example guards on the holder key's CreateRevision (the page's sample output), not on the TOKEN
     * column of {@code disco holders}: for a holder that waited the two differ, and the example must show which.
     */
    @Test
    void theBreakExampleGuardsOnTheCreateRevisionOfItsSampleOutput() {
        Matcher guard = Pattern.compile("create\\(\"/locks/orders/" + LEASE_A + "\"\\) = \"(\\d+)\"")
                .matcher(recipe("create(\"/locks/orders/"));
        assertTrue(guard.find(), "the lock break recipe guards on create(...)");
        Matcher sample = Pattern.compile("\"Key\" : \"/locks/orders/" + LEASE_A + "\"\\n\"CreateRevision\" : (\\d+)")
                .matcher(page);
        assertTrue(
                sample.find(),
                "docs/operations.md shows the CreateRevision of /locks/orders/" + LEASE_A
                        + " in the sample output of the queue recipe, which the break example guards on");
        assertEquals(sample.group(1), guard.group(1), "the break example guards on the CreateRevision it shows");
        Matcher holders = Pattern.compile("holder +0 +/locks/orders/" + LEASE_A + " +" + LEASE_A + " +\\d+s +(\\S+)")
                .matcher(page);
        assertTrue(holders.find(), "the disco holders sample shows /locks/orders/" + LEASE_A + " as the holder");
        assertNotEquals(
                holders.group(1),
                guard.group(1),
                "the example's TOKEN and CreateRevision must differ (a holder that waited), or nothing tells them apart");
    }

    // ---- the scenarios

    /** Find the holder, its lease and TTL; break it, guarded on the CreateRevision (the TOKEN does not match it). */
    @Test
    void findTheLockHolderAndBreakIt() throws Exception {
        LockService first = session("first").newLock("/locks/orders");
        EtcdSession holderSession = session("orders");
        LockService holder = holderSession.newLock("/locks/orders");
        EtcdSession waiterSession = session("orders");
        LockService waiter = waiterSession.newLock("/locks/orders");
        first.lock(WAIT);
        CompletableFuture<Grant> held = holder.lockAsync();
        String holderKey = "/locks/orders/" + hex(holderSession);
        awaitKey(holderKey);
        CompletableFuture<Grant> next = waiter.lockAsync();
        String waiterKey = "/locks/orders/" + hex(waiterSession);
        awaitKey(waiterKey);
        first.unlock();
        Grant grant = held.get(10, SECONDS);
        long created = kv(holderKey).getCreateRevision();
        assertTrue(
                grant.token().value() > created,
                "the holder waited: its token " + grant.token() + " is above its key's " + created
                        + " (the page's example: TOKEN 44, CreateRevision 41)");
        await().atMost(WAIT)
                .until(() -> kv(holderKey)
                        .getValue()
                        .toString(StandardCharsets.UTF_8)
                        .contains("\"token\""));

        String queue =
                run(recipe("get --prefix /locks/orders/ --sort-by=CREATE")).ok();
        List<String> keys = values(queue, "Key");
        assertEquals(List.of(holderKey, waiterKey), keys, queue);
        assertEquals(String.valueOf(created), values(queue, "CreateRevision").get(0), queue);
        assertEquals(
                Long.toString(holderSession.leaseId()),
                values(queue, "Lease").get(0),
                "the lease in decimal: " + queue);
        assertTrue(
                values(queue, "Value")
                        .get(0)
                        .contains("\\\"token\\\":" + grant.token().value()),
                queue);
        assertEquals(
                fieldNames(sampleAfter(recipe("get --prefix /locks/orders/ --sort-by=CREATE"))),
                fieldNames(queue),
                "the page's sample output has the fields etcdctl prints");

        String ttl = run(substitute(recipe("lease timetolive --keys"), Map.of(LEASE_A, hex(holderSession)), Map.of()))
                .ok();
        // etcdctl prints the id with 16 digits, the key's suffix has no leading zeros
        assertTrue(
                ttl.matches("(?s)lease 0*" + hex(holderSession)
                        + " granted with TTL\\(20s\\), remaining\\(\\d+s\\), attached keys\\(\\["
                        + Pattern.quote(holderKey) + "\\]\\).*"),
                ttl);

        String breakRecipe = recipe("create(\"/locks/orders/");
        Map<String, String> lease = Map.of(LEASE_A, hex(holderSession));
        Run wrong =
                run(substitute(breakRecipe, lease, Map.of("41", grant.token().value())));
        assertTrue(
                wrong.ok().contains("\"Succeeded\" : false"),
                "guarded on the TOKEN, the break deletes nothing: " + wrong);
        assertEquals(1, count(holderKey));

        String broken = run(substitute(
                        breakRecipe,
                        lease,
                        Map.of(
                                "41",
                                Long.parseLong(values(queue, "CreateRevision").get(0)))))
                .ok();
        assertTrue(broken.contains("\"Succeeded\" : true"), broken);
        long r = Long.parseLong(values(broken, "Revision").get(0));
        holder.done().toCompletableFuture().get(10, SECONDS);
        assertInstanceOf(LockLostException.class, holder.err().orElseThrow());
        Grant successor = next.get(10, SECONDS);
        assertTrue(
                successor.token().value() >= r && successor.token().isNewerThan(grant.token()),
                successor + " after R=" + r);
        waiter.unlock();
    }

    /** Readers: the phase marker's CreateRevision is their token; the readers' break ends every reader and the marker. */
    @Test
    void findTheReadersTokenAndBreakTheReadPhase() throws Exception {
        EtcdSession a = session("reader-a");
        EtcdSession b = session("reader-b");
        RWLockService ra = a.newRWLock("/rw/orders");
        RWLockService rb = b.newRWLock("/rw/orders");
        long phase = ra.rLock(WAIT).token().value();
        rb.rLock(WAIT);
        String markerOut =
                run(recipe("get disco-rwlock-phase:/rw/orders -w fields")).ok();
        assertEquals(String.valueOf(phase), field(markerOut, "CreateRevision"), "the readers' token: " + markerOut);

        String readerA = "/rw/orders/read/" + hex(a);
        String readerB = "/rw/orders/read/" + hex(b);
        String out = run(substitute(
                        recipe("create(\"/rw/orders/read/"),
                        Map.of(LEASE_A, hex(a), LEASE_B, hex(b)),
                        Map.of(
                                "57",
                                kv(readerA).getCreateRevision(),
                                "59",
                                kv(readerB).getCreateRevision(),
                                "58",
                                kv("disco-rwlock-phase:/rw/orders").getCreateRevision())))
                .ok();
        assertTrue(out.contains("\"Succeeded\" : true"), out);
        ra.done().toCompletableFuture().get(10, SECONDS);
        rb.done().toCompletableFuture().get(10, SECONDS);
        assertEquals(0, count("disco-rwlock-phase:/rw/orders"));
        assertTrue(
                session("reader-c").newRWLock("/rw/orders").rLock(WAIT).token().value() > phase,
                "the next reader's token is higher");
    }

    /** Semaphore: the limit record, the slots (a slot's token is its ModRevision), and breaking one permit. */
    @Test
    void findTheSemaphoreSlotsAndBreakOnePermit() throws Exception {
        EtcdSession a = session("permit-a");
        EtcdSession b = session("permit-b");
        SemaphoreService sa = a.newSemaphore("/sem/orders", 2);
        Permit pa = sa.acquire(WAIT);
        Permit pb = b.newSemaphore("/sem/orders", 2).acquire(WAIT);
        String limit = run(recipe("get disco-semaphore-limit:/sem/orders")).ok();
        assertEquals(
                List.of("disco-semaphore-limit:/sem/orders", "2"), limit.lines().toList(), limit);

        String slots =
                run(recipe("get --prefix disco-semaphore-slot:/sem/orders/")).ok();
        String slotA = "disco-semaphore-slot:/sem/orders/" + pa.slot();
        int i = values(slots, "Key").indexOf(slotA);
        assertTrue(i >= 0, slots);
        assertEquals(
                String.valueOf(pa.token().value()),
                values(slots, "ModRevision").get(i),
                "a slot's token is its ModRevision: " + slots);
        assertEquals(
                pa.key() + "@" + kv(pa.key()).getCreateRevision(),
                values(slots, "Value").get(i),
                slots);
        assertEquals("/sem/orders/" + hex(a), pa.key());

        String recipe = recipe("create(\"/sem/orders/").replace("disco-semaphore-slot:/sem/orders/0", slotA);
        String out = run(substitute(
                        recipe,
                        Map.of(LEASE_A, hex(a)),
                        Map.of(
                                "63",
                                kv(pa.key()).getCreateRevision(),
                                "64",
                                pa.token().value())))
                .ok();
        assertTrue(out.contains("\"Succeeded\" : true"), out);
        sa.done().toCompletableFuture().get(10, SECONDS);
        assertEquals(0, count(slotA));
        assertEquals(1, count("disco-semaphore-slot:/sem/orders/" + pb.slot()), "the other permit keeps its slot");
    }

    /** Leftovers: a read phase marker left by the last reader, found and deleted guarded on its ModRevision. */
    @Test
    void findAndDeleteALeftoverPhaseMarker() throws Exception {
        RWLockService reader = session("reader").newRWLock("/rw/orders");
        reader.rLock(WAIT);
        assertTrue(run(recipe("get --prefix /rw/orders/ --limit 1")).ok().contains("\"Count\" : 1"), "a reader holds");
        reader.rUnlock(); // the marker stays: only a writer's admission deletes it
        SemaphoreService sem = session("permit").newSemaphore("/sem/orders", 2);
        sem.acquire(WAIT);

        assertTrue(run(recipe("get --prefix disco-rwlock-phase: --keys-only"))
                .ok()
                .lines()
                .toList()
                .contains("disco-rwlock-phase:/rw/orders"));
        String count = run(recipe("get --prefix /rw/orders/ --limit 1")).ok();
        assertEquals("\"Count\" : 0", count.strip(), "nobody holds or waits: " + count);
        assertTrue(run(recipe("get --prefix disco-semaphore-limit: --keys-only"))
                .ok()
                .lines()
                .toList()
                .contains("disco-semaphore-limit:/sem/orders"));
        String slots =
                run(recipe("get --prefix disco-semaphore-slot: -w fields")).ok();
        assertTrue(
                values(slots, "Key").stream().anyMatch(k -> k.startsWith("disco-semaphore-slot:/sem/orders/")), slots);

        String delete = recipe("mod(\"disco-rwlock-phase:/rw/orders\")");
        long mod = kv("disco-rwlock-phase:/rw/orders").getModRevision();
        assertTrue(
                run(substitute(delete, Map.of(), Map.of("61", mod + 1))).ok().startsWith("FAILURE"),
                "guarded on another ModRevision, nothing is deleted");
        assertTrue(run(substitute(delete, Map.of(), Map.of("61", mod))).ok().startsWith("SUCCESS"));
        assertEquals(0, count("disco-rwlock-phase:/rw/orders"));
        sem.release();
    }

    /** {@code etcdctl watch} shows a hand-over's raw PUT and DELETE events. */
    @Test
    void watchShowsThePutAndDeleteOfAHandOver() throws Exception {
        ProcessBuilder pb = shell(recipe("watch --prefix /locks/orders/")).redirectErrorStream(true);
        Process watch = pb.start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(
                () -> watch.inputReader(StandardCharsets.UTF_8).lines().forEach(lines::add), "etcdctl-watch");
        reader.setDaemon(true);
        reader.start();
        try {
            EtcdSession s = session("watched");
            LockService lock = s.newLock("/locks/orders");
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            // the watch starts at an unknown instant: hand over until it has shown a PUT and a DELETE of the key
            while (!(seen.contains("PUT") && seen.contains("DELETE")) && System.nanoTime() < deadline) {
                lock.lock(WAIT);
                lock.unlock();
                for (String line; (line = lines.poll(500, TimeUnit.MILLISECONDS)) != null; ) {
                    seen.add(line);
                }
            }
            assertTrue(
                    seen.contains("PUT") && seen.contains("DELETE") && seen.contains("/locks/orders/" + hex(s)),
                    seen.toString());
        } finally {
            watch.descendants().forEach(ProcessHandle::destroy);
            watch.destroy();
            assertTrue(watch.waitFor(10, SECONDS), "etcdctl watch did not stop");
        }
    }

    // ---- helpers

    /** What a command printed (stdout and stderr together) and its exit code. */
    record Run(String command, int code, String out) {
        /** @return the output, after checking the command succeeded */
        String ok() {
            assertEquals(0, code, "exit code of\n" + command + "\n" + out);
            return out;
        }
    }

    /** Runs {@code command} as the page's reader would paste it into bash, with pipefail (a failing etcdctl is not masked by grep). */
    static Run run(String command) throws Exception {
        Process p = shell(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = p.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        });
        if (!p.waitFor(20, SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("did not finish within 20 s: " + command);
        }
        Run r = new Run(command, p.exitValue(), out.get(5, SECONDS));
        System.out.println("[runbook] $ " + command + "\n" + r.out());
        return r;
    }

    static ProcessBuilder shell(String command) {
        ProcessBuilder pb = new ProcessBuilder("bash", "-o", "pipefail", "-c", command);
        pb.environment().put("PATH", bin + File.pathSeparator + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().put("ETCDCTL_API", "3");
        pb.environment().put("ETCDCTL_ENDPOINTS", ETCD.cluster().endpoint(0));
        return pb;
    }

    /**
     * The page's command with its example lease ids and quoted revisions replaced by real ones. The example's
     * revisions must be in the order of the real ones (the page shows an order that can happen).
     */
    static String substitute(String recipe, Map<String, String> leases, Map<String, Long> revisions) {
        List<Map.Entry<String, Long>> byExample = revisions.entrySet().stream()
                .sorted(Comparator.comparingLong(e -> Long.parseLong(e.getKey())))
                .toList();
        List<Map.Entry<String, Long>> byReal = revisions.entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .toList();
        assertEquals(
                byReal.stream().map(Map.Entry::getKey).toList(),
                byExample.stream().map(Map.Entry::getKey).toList(),
                "the example's revisions " + revisions.keySet() + " are in the order of the real ones " + revisions);
        String command = recipe;
        for (Map.Entry<String, String> e : leases.entrySet()) {
            assertTrue(command.contains(e.getKey()), command);
            command = command.replace(e.getKey(), e.getValue());
        }
        // placeholders first: a real revision may equal another example revision
        Map<String, String> placeholders = new LinkedHashMap<>();
        for (Map.Entry<String, Long> e : revisions.entrySet()) {
            String placeholder = "@@" + placeholders.size() + "@@";
            assertTrue(command.contains("\"" + e.getKey() + "\""), e.getKey() + " in " + command);
            command = command.replace("\"" + e.getKey() + "\"", "\"" + placeholder + "\"");
            placeholders.put(placeholder, String.valueOf(e.getValue()));
        }
        for (Map.Entry<String, String> e : placeholders.entrySet()) {
            command = command.replace(e.getKey(), e.getValue());
        }
        return command;
    }

    /** The lines of the page's plain code block right after the {@code sh} block holding {@code recipe}. */
    static String sampleAfter(String recipe) {
        int at = page.indexOf(recipe);
        int close = page.indexOf("```\n", at);
        Matcher next =
                Pattern.compile("\\G```\\n```\\n(.*?)```\\n", Pattern.DOTALL).matcher(page);
        assertTrue(next.find(close), "a sample output right after: " + recipe);
        return next.group(1);
    }

    /** The values of {@code "name" : value} lines of etcdctl's {@code -w fields} output, quotes removed. */
    static List<String> values(String fields, String name) {
        Matcher m = Pattern.compile("^\"" + name + "\" : \"?(.*?)\"?$", Pattern.MULTILINE)
                .matcher(fields);
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    static String field(String fields, String name) {
        List<String> found = values(fields, name);
        assertTrue(!found.isEmpty(), name + " in " + fields);
        return found.get(0);
    }

    static List<String> fieldNames(String fields) {
        return fields.lines().map(l -> l.replaceAll("^\"(\\w+)\" : .*$", "$1")).collect(Collectors.toList());
    }

    static String minor(String version) {
        return version.replaceAll("^(\\d+\\.\\d+)\\..*$", "$1") + ".";
    }

    private EtcdSession session(String clientId) {
        EtcdSession s = EtcdSession.open(
                ETCD.client(),
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(20))
                        .requestTimeout(Duration.ofSeconds(10))
                        .clientId(clientId)
                        .build());
        sessions.add(s);
        return s;
    }

    private static String hex(EtcdSession s) {
        return Long.toHexString(s.leaseId());
    }

    private static KeyValue kv(String key) throws Exception {
        List<KeyValue> kvs =
                ETCD.client().getKVClient().get(bytes(key)).get(5, SECONDS).getKvs();
        assertEquals(1, kvs.size(), key);
        return kvs.get(0);
    }

    private static long count(String key) throws Exception {
        return ETCD.client()
                .getKVClient()
                .get(bytes(key), GetOption.builder().withCountOnly(true).build())
                .get(5, SECONDS)
                .getCount();
    }

    private static void awaitKey(String key) {
        await().atMost(WAIT).until(() -> count(key) == 1);
    }

    /** The etcdctl the harness uses: beside DISCO_ETCD_BINARY when there is one there, else on PATH. */
    static Path etcdctl() {
        String binary = System.getenv("DISCO_ETCD_BINARY");
        if (binary != null && !binary.isBlank()) {
            Path beside = Path.of(binary).toAbsolutePath().resolveSibling("etcdctl");
            if (Files.isExecutable(beside)) {
                return beside;
            }
        }
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir, "etcdctl");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new IllegalStateException(
                "etcdctl not found: install it with `apt-get install etcd-client` (Debian/Ubuntu)");
    }

    static Path repositoryFile(String relative) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve(relative))) {
                return dir.resolve(relative);
            }
        }
        throw new IllegalStateException(
                relative + " not found above " + Path.of("").toAbsolutePath());
    }
}

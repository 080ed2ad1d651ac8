package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A Go program using etcd's own recipes ({@code concurrency.Mutex}, {@code concurrency.Election},
 * {@code recipes.RWMutex} of etcd 3.4), for interop tests: {@code src/test/go/interop/main.go},
 * built with Debian's {@code golang-go} against the sources of {@code golang-etcd-server-dev} (GOPATH
 * mode, no module proxy). The binary is cached under {@code ~/.cache/disco-go-interop}, keyed by the
 * program's hash, so it is built once per machine. One instance is one Go process with one session;
 * commands go to its stdin, answers come from its stdout (see the program's comment).
 */
final class GoRecipes implements AutoCloseable {

    static final String GOPATH = "/usr/share/gocode";
    private static final Path SOURCE = Paths.get("src/test/go/interop/main.go");
    private static final String INSTALL = "install them with: sudo apt-get install golang-go golang-etcd-server-dev"
            + " (./test does it when run as root)";
    private static Path binary;

    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    final String lease;

    private GoRecipes(List<String> endpoints, int ttlSeconds) throws Exception {
        process = new ProcessBuilder(build().toString(), String.join(",", endpoints), String.valueOf(ttlSeconds))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            answers.add(line);
                        }
                    } catch (IOException e) {
                        answers.add("error " + e);
                    }
                },
                "go-recipes-stdout");
        reader.setDaemon(true);
        reader.start();
        lease = expect("ready", Duration.ofSeconds(15)).split(" ")[1];
    }

    /** Starts a Go program with its own session of {@code ttlSeconds} on {@code endpoints}. */
    static GoRecipes start(List<String> endpoints, int ttlSeconds) throws Exception {
        return new GoRecipes(endpoints, ttlSeconds);
    }

    /** Sends one command; its answer is read with {@link #expect}. */
    GoRecipes send(String command) {
        in.println(command);
        return this;
    }

    /** The next answer, which must start with {@code word}, within {@code within}. */
    String expect(String word, Duration within) throws InterruptedException {
        String line = answers.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(line, "the Go program did not answer '" + word + "' within " + within.toMillis() + " ms");
        assertTrue(
                line.equals(word) || line.startsWith(word + " "),
                "the Go program answered '" + line + "', expected '" + word + "'");
        return line;
    }

    /** Asserts that the Go program answers nothing for {@code during}: it is waiting. */
    void expectNothing(Duration during) throws InterruptedException {
        String line = answers.poll(during.toMillis(), TimeUnit.MILLISECONDS);
        assertNull(line, "the Go program should still be waiting, but answered");
    }

    /** The create revision in an answer "word key revision". */
    static long revision(String answer) {
        String[] f = answer.split(" ");
        return Long.parseLong(f[f.length - 1]);
    }

    @Override
    public void close() throws Exception {
        send("quit");
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    /** Builds the program once per machine (cached by the source's hash). */
    private static synchronized Path build() throws Exception {
        if (binary != null) {
            return binary;
        }
        if (!Files.isDirectory(Paths.get(GOPATH, "src/go.etcd.io/etcd/contrib/recipes"))) {
            throw new AssertionError("etcd's Go sources are missing (" + GOPATH + "/src/go.etcd.io/etcd); " + INSTALL);
        }
        byte[] source = Files.readAllBytes(SOURCE);
        String hash = HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(source))
                .substring(0, 16);
        Path dir = Paths.get(System.getProperty("user.home"), ".cache", "disco-go-interop", hash);
        Path bin = dir.resolve("interop");
        if (!Files.isExecutable(bin)) {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "interop", ".tmp");
            ProcessBuilder pb = new ProcessBuilder(
                            "go",
                            "build",
                            "-o",
                            tmp.toString(),
                            SOURCE.toAbsolutePath().toString())
                    .redirectErrorStream(true);
            pb.environment().put("GO111MODULE", "off");
            pb.environment().put("GOPATH", GOPATH);
            pb.environment().put("GOFLAGS", "");
            pb.environment().putIfAbsent("GOCACHE", dir.resolve("gocache").toString());
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                throw new AssertionError("the Go toolchain ('go') is missing; " + INSTALL, e);
            }
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                throw new AssertionError("building " + SOURCE + " failed:\n" + log);
            }
            Files.move(tmp, bin, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        binary = bin;
        return bin;
    }
}

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * docs/guard.md covers every way to a guard that the tree ships (issue 51, item 8): it shows how to build a guard
 * with each {@code IssuedBound} of the main sources (its {@code X.of(} in a java block: etcd's and ZooKeeper's),
 * names each group of the starter's guard properties that docs/spring-boot.md lists ({@code disco.guard.http.},
 * {@code disco.guard.grpc.}), and names the {@code disco} tool's part, every {@code disco <command>} it names being
 * a command of the tool (disco-cli's {@code @Command} classes), {@code break} among them. Run from the repository
 * root: {@code java scripts/CheckGuardDoc.java}; exits 1 and says what is missing.
 */
public class CheckGuardDoc {

    public static void main(String[] args) throws IOException {
        String guard = Files.readString(Path.of("docs/guard.md"));
        String javaBlocks = blocks(guard, "java");
        List<String> problems = new ArrayList<>();

        Set<String> bounds = new TreeSet<>();
        Pattern implementsBound = Pattern.compile("public (?:final )?class (\\w+)[^{]*\\bimplements\\b[^{]*\\bIssuedBound\\b");
        try (Stream<Path> files = Files.walk(Path.of("."))) {
            for (Path p : files.filter(f -> f.toString().endsWith(".java") && f.toString().contains("/src/main/java/")
                    && !f.toString().contains("/target/")).toList()) {
                Matcher m = implementsBound.matcher(Files.readString(p));
                while (m.find()) {
                    bounds.add(m.group(1));
                }
            }
        }
        if (bounds.size() < 2) {
            problems.add("found " + bounds + " implementing IssuedBound; expected etcd's and ZooKeeper's at least");
        }
        for (String bound : bounds) {
            if (!javaBlocks.contains(bound + ".of(")) {
                problems.add("docs/guard.md shows no guard built with " + bound + " (" + bound + ".of( in a java block)");
            }
        }

        Set<String> groups = new TreeSet<>();
        Matcher property = Pattern.compile("(?m)^\\| `(disco\\.guard\\.[a-z-]+\\.)").matcher(Files.readString(Path.of("docs/spring-boot.md")));
        while (property.find()) {
            groups.add(property.group(1));
        }
        if (groups.isEmpty()) {
            problems.add("docs/spring-boot.md lists no disco.guard.* property");
        }
        for (String group : groups) {
            if (!guard.contains(group)) {
                problems.add("docs/guard.md does not name the starter's " + group + "* properties");
            }
        }

        Set<String> commands = new TreeSet<>();
        Pattern command = Pattern.compile("@Command\\(\\s*name\\s*=\\s*\"([a-z-]+)\"");
        try (Stream<Path> files = Files.list(Path.of("disco-cli/src/main/java/io/disco/cli"))) {
            for (Path p : files.filter(f -> f.toString().endsWith("Command.java")).toList()) {
                Matcher m = command.matcher(Files.readString(p));
                if (m.find()) {
                    commands.add(m.group(1));
                }
            }
        }
        Set<String> named = new TreeSet<>();
        Matcher use = Pattern.compile("`disco ([a-z-]+)").matcher(guard);
        while (use.find()) {
            named.add(use.group(1));
        }
        if (!named.contains("break")) {
            problems.add("docs/guard.md does not name `disco break` (the tool's part: the revision to raise a mark to)");
        }
        for (String n : named) {
            if (!commands.contains(n)) {
                problems.add("docs/guard.md names `disco " + n + "`, which is no command of the tool " + commands);
            }
        }

        if (!problems.isEmpty()) {
            problems.forEach(p -> System.err.println("CheckGuardDoc: " + p));
            System.exit(1);
        }
        System.err.println("CheckGuardDoc: docs/guard.md covers " + bounds + ", " + groups + " and `disco` " + named);
    }

    /** The text of the fenced blocks of {@code language}. */
    static String blocks(String markdown, String language) {
        StringBuilder out = new StringBuilder();
        boolean in = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                in = !in && line.equals("```" + language);
                continue;
            }
            if (in) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }
}

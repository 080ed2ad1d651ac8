package io.disco.examples.bootapp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/spring-boot.md shows this module's files as they are: a fenced block that follows a line linking to one of
 * them ({@code [...](../disco-spring-boot-example/...)}, then the block, blank lines between allowed) is that whole
 * file, character for character. The controller, the properties, the ledger and the test the page teaches are among
 * them.
 */
class SpringBootDocTest {

    private static final Pattern LINK = Pattern.compile("\\]\\(\\.\\./(disco-spring-boot-example/[^)#\\s]+)\\)");

    @Test
    void theBlocksOfTheSpringBootPageAreTheFilesTheyName() throws IOException {
        Path page = repositoryFile("docs/spring-boot.md");
        Path root = page.getParent().getParent();
        List<String> lines = Files.readAllLines(page);
        TreeSet<String> shown = new TreeSet<>();
        List<String> problems = new ArrayList<>();
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher link = LINK.matcher(lines.get(i));
            String file = null;
            while (!fenced && link.find()) {
                file = link.group(1); // the last link of the line names the block's file
            }
            int open = i + 1;
            while (open < lines.size() && lines.get(open).isBlank()) {
                open++;
            }
            if (file == null || open >= lines.size() || !lines.get(open).startsWith("```")) {
                continue;
            }
            int close = open + 1;
            while (close < lines.size() && !lines.get(close).startsWith("```")) {
                close++;
            }
            String block = String.join("\n", lines.subList(open + 1, close)) + "\n";
            String source = Files.readString(root.resolve(file));
            if (!block.equals(source)) {
                problems.add("docs/spring-boot.md, the block at line " + (open + 1) + ", is not " + file + " as it is ("
                        + firstDifference(block, source) + "): update the page's block to the file, or the file to the"
                        + " page");
            }
            shown.add(file);
            i = close;
        }
        if (!problems.isEmpty()) {
            fail(String.join("\n", problems));
        }
        assertThat(shown)
                .as("the files docs/spring-boot.md shows whole")
                .contains(
                        "disco-spring-boot-example/src/main/java/io/disco/examples/bootapp/PaymentController.java",
                        "disco-spring-boot-example/src/main/java/io/disco/examples/bootapp/LedgerController.java",
                        "disco-spring-boot-example/src/main/resources/application.properties",
                        "disco-spring-boot-example/src/test/java/io/disco/examples/bootapp/ExampleApplicationTest.java");
    }

    private static String firstDifference(String block, String source) {
        String[] a = block.split("\n", -1);
        String[] b = source.split("\n", -1);
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            String x = i < a.length ? a[i] : "<end>";
            String y = i < b.length ? b[i] : "<end>";
            if (!x.equals(y)) {
                return "line " + (i + 1) + " of the block: page '" + x + "', file '" + y + "'";
            }
        }
        return "they differ";
    }

    private static Path repositoryFile(String relative) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve(relative))) {
                return dir.resolve(relative);
            }
        }
        throw new IllegalStateException(
                relative + " not found above " + Path.of("").toAbsolutePath());
    }
}

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks every relative link of README.md, CONTRIBUTING.md, SECURITY.md, CHANGELOG.md and docs/*.md: the file it names exists, and the anchor it
 * names is a heading of that file (GitHub's anchor rule: lower case, punctuation but '-' and '_' dropped,
 * spaces to '-'). Links with a scheme (https:, mailto:) are not fetched. Run from the repository root:
 * {@code java scripts/CheckLinks.java}; exits 1 and names each broken link.
 */
public class CheckLinks {

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

    public static void main(String[] args) throws IOException {
        List<Path> pages = new ArrayList<>();
        for (String top : new String[] {"README.md", "CONTRIBUTING.md", "SECURITY.md", "CHANGELOG.md"}) {
            if (Files.exists(Path.of(top))) {
                pages.add(Path.of(top));
            }
        }
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path page : pages) {
            boolean fenced = false;
            int n = 0;
            for (String line : Files.readAllLines(page)) {
                n++;
                if (line.startsWith("```")) {
                    fenced = !fenced;
                }
                if (fenced) {
                    continue;
                }
                Matcher m = LINK.matcher(line);
                while (m.find()) {
                    String target = m.group(1);
                    if (target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*")) {
                        continue;
                    }
                    links++;
                    int hash = target.indexOf('#');
                    String file = hash < 0 ? target : target.substring(0, hash);
                    String anchor = hash < 0 ? null : target.substring(hash + 1);
                    Path dest = file.isEmpty() ? page : page.resolveSibling(file).normalize();
                    if (!Files.exists(dest)) {
                        broken.add(page + ":" + n + ": " + target + " (no file " + dest + ")");
                    } else if (anchor != null && dest.toString().endsWith(".md") && !anchors(dest).contains(anchor)) {
                        broken.add(page + ":" + n + ": " + target + " (no heading #" + anchor + " in " + dest + ")");
                    }
                }
            }
        }
        broken.forEach(b -> System.err.println("check-links: broken " + b));
        System.out.println("check-links: " + links + " relative links in " + pages.size() + " pages, " + broken.size() + " broken");
        System.exit(broken.isEmpty() ? 0 : 1);
    }

    private static Set<String> anchors(Path page) throws IOException {
        Set<String> out = new HashSet<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(page)) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            Matcher m = HEADING.matcher(line);
            if (!fenced && m.matches()) {
                String a = m.group(1).trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_ -]", "").replace(' ', '-');
                String unique = a;
                for (int i = 1; !out.add(unique); i++) {
                    unique = a + "-" + i;
                }
            }
        }
        return out;
    }
}

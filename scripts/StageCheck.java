import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Checks a staged release (a folder in Maven repository layout, as central-publishing-maven-plugin
 * stages it) the way the Central Portal validates a deployment, and a little more.
 *
 * <pre>java scripts/StageCheck.java STAGING_DIR BOM_POM VERSION "TOOL..."</pre>
 *
 * <ul>
 *   <li>what is staged is exactly disco-bom and the io.disco modules disco-bom manages, and none of the tools;
 *   <li>every artifact has its POM, and a jar packaging its jar, -sources.jar and -javadoc.jar;
 *   <li>every file has an .asc signature that gpg verifies (GNUPGHOME holds the public key), and .md5 and
 *       .sha1 files that match it;
 *   <li>every POM has what Central requires (groupId, artifactId, version, name, description, url, a license
 *       with name and url, a developer, scm with url and connection), no parent (self-contained), no
 *       SNAPSHOT, no dependency without a written-out version;
 *   <li>every main jar's manifest has an Automatic-Module-Name, distinct across modules; every main jar holds
 *       classes but a starter's ({@code *-starter}: dependencies only, as Spring Boot's starters); the sources jar
 *       holds .java files, the javadoc jar an index.html;
 *   <li>the bundle zip beside the staging folder holds every staged file.
 * </ul>
 * Prints each failure and "stage-check: N passed, N failed"; exits 1 on any failure.
 */
public class StageCheck {
    private static final String GROUP = "io.disco";
    private static final Pattern MODULE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
    private static final Pattern PROPERTY = Pattern.compile("\\$\\{([^}]+)}");

    private final List<String> failures = new ArrayList<>();
    private int passed;

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: java StageCheck.java STAGING_DIR BOM_POM VERSION \"TOOL...\"");
            System.exit(2);
        }
        StageCheck check = new StageCheck();
        check.run(Path.of(args[0]), Path.of(args[1]), args[2], Set.of(args[3].trim().split("\\s+")));
        System.out.println("stage-check: " + check.passed + " passed, " + check.failures.size() + " failed");
        System.exit(check.failures.isEmpty() ? 0 : 1);
    }

    private void check(boolean ok, String what) {
        if (ok) {
            passed++;
        } else {
            failures.add(what);
            System.out.println("FAILED: " + what);
        }
    }

    private void run(Path staging, Path bomPom, String version, Set<String> tools) throws Exception {
        Path groupDir = staging.resolve(GROUP.replace('.', '/'));
        check(Files.isDirectory(groupDir), "staging folder " + groupDir + " exists");
        if (!Files.isDirectory(groupDir)) {
            return;
        }
        Set<String> staged = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(groupDir)) {
            dirs.filter(Files::isDirectory).forEach(d -> staged.add(d.getFileName().toString()));
        }
        Set<String> expected = new TreeSet<>(managedModules(bomPom));
        expected.add("disco-bom");
        for (String a : expected) {
            check(staged.contains(a), a + " is in disco-bom but was not staged (a module of the build? published?)");
        }
        for (String a : staged) {
            check(expected.contains(a), a + " was staged but is not in disco-bom: add its line to disco-bom/pom.xml,"
                    + " or list it in excludeArtifacts of the release profile if it is a tool");
            check(!tools.contains(a), a + " is a tool and must not be staged");
        }

        Map<String, String> moduleNames = new TreeMap<>();
        List<String> stagedFiles = new ArrayList<>();
        for (String a : staged) {
            Path dir = groupDir.resolve(a).resolve(version);
            check(Files.isDirectory(dir), a + ": version folder " + version + " staged");
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.list(dir)) {
                files.forEach(f -> stagedFiles.add(staging.relativize(f).toString()));
            }
            Path pom = dir.resolve(a + "-" + version + ".pom");
            check(Files.isRegularFile(pom), a + ": POM staged");
            if (!Files.isRegularFile(pom)) {
                continue;
            }
            String packaging = checkPom(a, version, pom);
            List<Path> files = new ArrayList<>(List.of(pom));
            if ("jar".equals(packaging)) {
                Path jar = dir.resolve(a + "-" + version + ".jar");
                Path sources = dir.resolve(a + "-" + version + "-sources.jar");
                Path javadoc = dir.resolve(a + "-" + version + "-javadoc.jar");
                for (Path f : List.of(jar, sources, javadoc)) {
                    check(Files.isRegularFile(f), a + ": " + f.getFileName() + " staged");
                    if (Files.isRegularFile(f)) {
                        files.add(f);
                    }
                }
                if (Files.isRegularFile(jar)) {
                    checkMainJar(a, jar, moduleNames);
                }
                if (Files.isRegularFile(sources)) {
                    check(hasEntry(sources, ".java"), a + ": the sources jar holds .java files");
                }
                if (Files.isRegularFile(javadoc)) {
                    check(hasEntry(javadoc, "index.html"), a + ": the javadoc jar holds index.html");
                }
            } else {
                check("pom".equals(packaging), a + ": packaging is jar or pom, not " + packaging);
            }
            for (Path f : files) {
                checkSignatureAndChecksums(a, f);
            }
        }
        checkBundle(staging, stagedFiles);
    }

    /** The io.disco artifactIds that the BOM's dependencyManagement lists. */
    private Set<String> managedModules(Path bomPom) throws Exception {
        Document doc = parse(bomPom);
        Set<String> modules = new TreeSet<>();
        Element dm = child(doc.getDocumentElement(), "dependencyManagement");
        Element deps = dm == null ? null : child(dm, "dependencies");
        if (deps != null) {
            for (Element d : children(deps, "dependency")) {
                if (GROUP.equals(text(d, "groupId"))) {
                    modules.add(text(d, "artifactId"));
                }
            }
        }
        check(!modules.isEmpty(), "disco-bom manages io.disco modules");
        return modules;
    }

    private String checkPom(String a, String version, Path pom) throws Exception {
        String raw = Files.readString(pom).replaceAll("(?s)<!--.*?-->", "");
        Element p = parse(pom).getDocumentElement();
        check("4.0.0".equals(text(p, "modelVersion")), a + ": POM modelVersion 4.0.0");
        check(GROUP.equals(text(p, "groupId")), a + ": POM groupId " + GROUP);
        check(a.equals(text(p, "artifactId")), a + ": POM artifactId");
        check(version.equals(text(p, "version")), a + ": POM version " + version);
        check(child(p, "parent") == null, a + ": POM is self-contained (no parent)");
        check(!raw.contains("SNAPSHOT"), a + ": POM names no SNAPSHOT");
        check(!blank(text(p, "name")), a + ": POM name");
        check(!blank(text(p, "description")), a + ": POM description");
        check(text(p, "url") != null && text(p, "url").startsWith("https://"), a + ": POM url");
        Element licenses = child(p, "licenses");
        List<Element> licenseList = licenses == null ? List.of() : children(licenses, "license");
        check(!licenseList.isEmpty(), a + ": POM licenses");
        for (Element l : licenseList) {
            check(!blank(text(l, "name")) && !blank(text(l, "url")), a + ": POM license name and url");
        }
        Element developers = child(p, "developers");
        List<Element> devList = developers == null ? List.of() : children(developers, "developer");
        check(!devList.isEmpty(), a + ": POM developers");
        for (Element d : devList) {
            check(!blank(text(d, "name")), a + ": POM developer name");
        }
        Element scm = child(p, "scm");
        check(scm != null && !blank(text(scm, "url")) && !blank(text(scm, "connection")),
                a + ": POM scm url and connection");
        Element deps = child(p, "dependencies");
        if (deps != null) {
            for (Element d : children(deps, "dependency")) {
                String v = text(d, "version");
                check(!blank(v) && !v.contains("${"),
                        a + ": dependency " + text(d, "artifactId") + " has a written-out version (" + v + ")");
            }
        }
        // A BOM may keep ${...} in its management, but only of properties it defines itself.
        Set<String> defined = new TreeSet<>(Set.of("project.version", "project.groupId"));
        Element props = child(p, "properties");
        if (props != null) {
            NodeList nodes = props.getChildNodes();
            for (int i = 0; i < nodes.getLength(); i++) {
                if (nodes.item(i) instanceof Element e) {
                    defined.add(e.getTagName());
                }
            }
        }
        Matcher m = PROPERTY.matcher(raw);
        while (m.find()) {
            check(defined.contains(m.group(1)), a + ": POM property ${" + m.group(1) + "} is defined in it");
        }
        String packaging = text(p, "packaging");
        return packaging == null ? "jar" : packaging;
    }

    private void checkMainJar(String a, Path jar, Map<String, String> moduleNames) throws IOException {
        try (JarFile j = new JarFile(jar.toFile())) {
            String name = j.getManifest() == null ? null
                    : j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
            check(name != null && name.startsWith(GROUP) && MODULE_NAME.matcher(name).matches(),
                    a + ": Automatic-Module-Name in the manifest (" + name + ")");
            if (name != null) {
                String other = moduleNames.put(name, a);
                check(other == null, a + ": Automatic-Module-Name " + name + " not also " + other + "'s");
            }
            boolean classes = j.stream().anyMatch(e -> e.getName().endsWith(".class"));
            if (a.endsWith("-starter")) {
                // a starter is a jar of dependencies only, as Spring Boot's own are
                check(!classes, a + ": the starter jar holds no classes");
            } else {
                check(classes, a + ": the jar holds classes");
            }
        }
    }

    private void checkSignatureAndChecksums(String a, Path f) throws Exception {
        String name = f.getFileName().toString();
        byte[] content = Files.readAllBytes(f);
        for (String[] alg : new String[][] {{"md5", "MD5"}, {"sha1", "SHA-1"}}) {
            Path sum = f.resolveSibling(name + "." + alg[0]);
            boolean present = Files.isRegularFile(sum);
            check(present, a + ": " + name + "." + alg[0] + " staged");
            if (present) {
                String want = HexFormat.of().formatHex(MessageDigest.getInstance(alg[1]).digest(content));
                String got = Files.readString(sum).trim().split("\\s+")[0].toLowerCase();
                check(want.equals(got), a + ": " + name + "." + alg[0] + " matches the file");
            }
        }
        Path asc = f.resolveSibling(name + ".asc");
        boolean signed = Files.isRegularFile(asc);
        check(signed, a + ": " + name + ".asc staged");
        if (signed) {
            Process gpg = new ProcessBuilder("gpg", "--batch", "--verify", asc.toString(), f.toString())
                    .redirectErrorStream(true).start();
            String out = new String(gpg.getInputStream().readAllBytes());
            int rc = gpg.waitFor();
            check(rc == 0 && out.contains("Good signature"), a + ": " + name + ".asc verifies" + (rc == 0 ? "" : ": " + out));
        }
    }

    private void checkBundle(Path staging, List<String> stagedFiles) throws IOException {
        Path bundle = staging.resolveSibling("central-publishing").resolve("central-bundle.zip");
        check(Files.isRegularFile(bundle), "the bundle " + bundle + " was made");
        if (!Files.isRegularFile(bundle)) {
            return;
        }
        Set<String> entries = new TreeSet<>();
        try (ZipFile z = new ZipFile(bundle.toFile())) {
            z.stream().filter(e -> !e.isDirectory()).forEach(e -> entries.add(e.getName()));
        }
        for (String f : stagedFiles) {
            check(entries.contains(f.replace('\\', '/')), "the bundle holds " + f);
        }
    }

    private static boolean hasEntry(Path jar, String suffix) throws IOException {
        try (ZipFile z = new ZipFile(jar.toFile())) {
            return z.stream().anyMatch(e -> e.getName().endsWith(suffix));
        }
    }

    private static Document parse(Path xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (InputStream in = Files.newInputStream(xml)) {
            return f.newDocumentBuilder().parse(in);
        }
    }

    private static Element child(Element parent, String tag) {
        List<Element> list = children(parent, tag);
        return list.isEmpty() ? null : list.get(0);
    }

    private static List<Element> children(Element parent, String tag) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(tag)) {
                out.add(e);
            }
        }
        return out;
    }

    private static String text(Element parent, String tag) {
        Element e = child(parent, tag);
        return e == null ? null : e.getTextContent().trim();
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Says how two jars that should be identical differ, entry by entry: entries only in one of them, entries
 * whose content, time, extra field or comment differ, and a different entry order.
 *
 * <pre>java scripts/JarDiff.java A.jar B.jar</pre>
 */
public class JarDiff {
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: java JarDiff.java A.jar B.jar");
            System.exit(2);
        }
        try (ZipFile a = new ZipFile(args[0]); ZipFile b = new ZipFile(args[1])) {
            Map<String, ZipEntry> ea = entries(a);
            Map<String, ZipEntry> eb = entries(b);
            int differences = 0;
            for (String name : ea.keySet()) {
                ZipEntry x = ea.get(name);
                ZipEntry y = eb.get(name);
                if (y == null) {
                    System.out.println("only in the first: " + name);
                    differences++;
                    continue;
                }
                List<String> what = new ArrayList<>();
                if (!Arrays.equals(a.getInputStream(x).readAllBytes(), b.getInputStream(y).readAllBytes())) {
                    what.add("content");
                }
                if (x.getTime() != y.getTime()) {
                    what.add("time " + x.getLastModifiedTime() + " vs " + y.getLastModifiedTime());
                }
                if (!Arrays.equals(x.getExtra(), y.getExtra())) {
                    what.add("extra field");
                }
                if (x.getMethod() != y.getMethod()) {
                    what.add("compression method");
                }
                if (!what.isEmpty()) {
                    System.out.println(name + ": " + String.join(", ", what));
                    differences++;
                }
            }
            for (String name : eb.keySet()) {
                if (!ea.containsKey(name)) {
                    System.out.println("only in the second: " + name);
                    differences++;
                }
            }
            if (!new ArrayList<>(ea.keySet()).equals(new ArrayList<>(eb.keySet()))) {
                System.out.println("the entries are in a different order");
                differences++;
            }
            if (differences == 0) {
                System.out.println("every entry is equal: the archives differ in their zip structure"
                        + " (comment, compression level, central directory)");
            }
        }
    }

    private static Map<String, ZipEntry> entries(ZipFile z) {
        Map<String, ZipEntry> m = new LinkedHashMap<>();
        z.stream().forEach(e -> m.put(e.getName(), e));
        return m;
    }
}

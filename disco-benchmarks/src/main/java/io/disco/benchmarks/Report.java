package io.disco.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The rows and targets of one run: printed as one table, and written as JSON. */
final class Report {

    /** One measured case: median, p90 and p99 in {@code unit} (NaN when not applicable), plus named figures. */
    record Row(
            String section,
            String name,
            double median,
            double p90,
            double p99,
            String unit,
            Map<String, Object> extra) {}

    /** A target from the issue, its measured value and whether it was met; {@code cause} explains a miss. */
    record Target(String name, String goal, String measured, boolean met, String cause) {}

    final List<Row> rows = new ArrayList<>();
    final List<Target> targets = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    final Map<String, Object> meta = new LinkedHashMap<>();

    Row row(String section, String name, double median, double p99, String unit, Object... kv) {
        return row(section, name, median, Double.NaN, p99, unit, kv);
    }

    /** A row of samples in milliseconds: their median, p90 and p99, plus named figures. */
    Row samples(String section, String name, double[] ms, Object... kv) {
        return row(section, name, Stats.median(ms), Stats.percentile(ms, 90), Stats.p99(ms), "ms", kv);
    }

    /** A row with its median, p90 and p99. */
    Row row(String section, String name, double median, double p90, double p99, String unit, Object... kv) {
        Row r = new Row(section, name, median, p90, p99, unit, ordered(kv));
        rows.add(r);
        return r;
    }

    void target(String name, String goal, String measured, boolean met, String cause) {
        targets.add(new Target(name, goal, measured, met, cause));
    }

    /**
     * @return the pairs {@code kv} (name, value, name, value, ...) as a map in their order; where a name is due, an
     *     {@code Object[]} of such pairs (figures that several rows share) is spliced in
     */
    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        put(m, kv);
        return m;
    }

    private static void put(Map<String, Object> m, Object[] kv) {
        for (int i = 0; i < kv.length; ) {
            if (kv[i] instanceof Object[] pairs) {
                put(m, pairs);
                i++;
            } else if (i + 1 < kv.length) {
                m.put((String) kv[i], kv[i + 1]);
                i += 2;
            } else {
                return;
            }
        }
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        if (a >= 100_000) {
            return String.format(Locale.ROOT, "%.3g", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String fmt(Object o) {
        return o instanceof Double || o instanceof Float ? num(((Number) o).doubleValue()) : String.valueOf(o);
    }

    String table() {
        StringBuilder sb = new StringBuilder();
        int w = 8;
        for (Row r : rows) {
            w = Math.max(w, r.section.length() + 2 + r.name.length());
        }
        String head = String.format(
                Locale.ROOT,
                "%-" + w + "s %10s %8s %10s  %-5s %s%n",
                "measurement",
                "median",
                "p90",
                "p99",
                "unit",
                "figures");
        sb.append(head);
        sb.append("-".repeat(head.length() + 30)).append('\n');
        String section = null;
        for (Row r : rows) {
            if (section != null && !section.equals(r.section)) {
                sb.append('\n');
            }
            section = r.section;
            StringBuilder extra = new StringBuilder();
            r.extra.forEach((k, v) -> extra.append(k).append('=').append(fmt(v)).append("  "));
            sb.append(String.format(
                    Locale.ROOT,
                    "%-" + w + "s %10s %8s %10s  %-5s %s%n",
                    r.section + ": " + r.name,
                    num(r.median),
                    num(r.p90),
                    num(r.p99),
                    r.unit,
                    extra.toString().trim()));
        }
        sb.append('\n').append("targets").append('\n');
        for (Target t : targets) {
            sb.append(String.format(
                    Locale.ROOT, "  [%s] %s (%s): %s%n", t.met ? "met   " : "MISSED", t.name, t.goal, t.measured));
            if (t.cause != null && !t.cause.isBlank()) {
                sb.append("           ")
                        .append(t.met ? "note: " : "cause: ")
                        .append(t.cause)
                        .append('\n');
            }
        }
        if (!notes.isEmpty()) {
            sb.append('\n');
            for (String n : notes) {
                sb.append("note: ").append(n).append('\n');
            }
        }
        return sb.toString();
    }

    void writeJson(Path file) throws IOException {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("meta", meta);
        List<Object> rs = new ArrayList<>();
        for (Row r : rows) {
            Map<String, Object> m = ordered(
                    "section", r.section, "name", r.name, "median", r.median, "p90", r.p90, "p99", r.p99, "unit",
                    r.unit);
            m.putAll(r.extra);
            rs.add(m);
        }
        root.put("rows", rs);
        List<Object> ts = new ArrayList<>();
        for (Target t : targets) {
            ts.add(ordered("target", t.name, "goal", t.goal, "measured", t.measured, "met", t.met, "cause", t.cause));
        }
        root.put("targets", ts);
        root.put("notes", notes);
        StringBuilder sb = new StringBuilder();
        json(sb, root, "");
        sb.append('\n');
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    }

    private static void json(StringBuilder sb, Object o, String indent) {
        if (o == null) {
            sb.append("null");
        } else if (o instanceof Map<?, ?> m) {
            sb.append("{");
            String in = indent + "  ";
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "\n" : ",\n").append(in);
                first = false;
                str(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                json(sb, e.getValue(), in);
            }
            sb.append(first ? "}" : "\n" + indent + "}");
        } else if (o instanceof List<?> l) {
            sb.append("[");
            String in = indent + "  ";
            boolean first = true;
            for (Object x : l) {
                sb.append(first ? "\n" : ",\n").append(in);
                first = false;
                json(sb, x, in);
            }
            sb.append(first ? "]" : "\n" + indent + "]");
        } else if (o instanceof Double d) {
            sb.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.6g", d));
        } else if (o instanceof Number || o instanceof Boolean) {
            sb.append(o);
        } else {
            str(sb, String.valueOf(o));
        }
    }

    private static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}

package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/** {@link GuardStore#file(Path)}: a properties file of key = mark, replaced atomically. */
final class FileGuardStore implements GuardStore {

    private final Path file;
    private final Path temp;
    /** Guards {@link #marks} and the file: private, since the store is handed to the user. */
    private final Object lock = new Object();
    /** What the file holds; read from the file on first use. */
    private Map<String, Long> marks;

    FileGuardStore(Path file) {
        this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
        this.temp = this.file.resolveSibling(this.file.getFileName() + ".tmp");
    }

    @Override
    public Map<String, FencingToken> load() throws IOException {
        synchronized (lock) {
            Map<String, FencingToken> out = new HashMap<>();
            marks().forEach((k, v) -> out.put(k, FencingToken.of(v)));
            return out;
        }
    }

    @Override
    public void persist(String key, FencingToken mark) throws IOException {
        java.util.Objects.requireNonNull(key, "key");
        java.util.Objects.requireNonNull(mark, "mark");
        synchronized (lock) {
            Map<String, Long> current = marks();
            Long old = current.get(key);
            if (old != null && old >= mark.value()) {
                return;
            }
            Map<String, Long> next = new HashMap<>(current);
            next.put(key, mark.value());
            write(next);
            marks = next;
        }
    }

    @Override
    public void lower(String key, FencingToken mark) throws IOException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mark, "mark");
        synchronized (lock) {
            Map<String, Long> next = new HashMap<>(marks());
            next.put(key, mark.value());
            write(next);
            marks = next;
        }
    }

    private Map<String, Long> marks() throws IOException {
        if (marks == null) {
            marks = read();
        }
        return marks;
    }

    private Map<String, Long> read() throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (NoSuchFileException e) {
            return new HashMap<>();
        }
        Map<String, Long> out = new HashMap<>();
        for (String k : p.stringPropertyNames()) {
            try {
                out.put(k, FencingToken.parse(p.getProperty(k)).value());
            } catch (MalformedTokenException e) {
                throw new IOException(file + ": key '" + k + "': " + e.getMessage(), e);
            }
        }
        return out;
    }

    private void write(Map<String, Long> next) throws IOException {
        Properties p = new Properties();
        next.forEach((k, v) -> p.setProperty(k, Long.toString(v)));
        StringWriter text = new StringWriter();
        p.store(text, "disco fencing marks: key = highest accepted token");
        ByteBuffer bytes = StandardCharsets.UTF_8.encode(text.toString());
        try (FileChannel out = FileChannel.open(
                temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
            out.force(true);
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    @Override
    public String toString() {
        return "GuardStore.file(" + file + ")";
    }
}

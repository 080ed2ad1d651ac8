package io.disco.provider.etcd;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * {@code System.err}, copied into a buffer from {@link #start()} until {@link #close()}, for the tests that read
 * what the library logged (it logs through SLF4J; the tests' binding, slf4j-simple, writes to standard error).
 * Everything still reaches the real standard error.
 */
final class CapturedStderr implements AutoCloseable {

    private final PrintStream real = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    private CapturedStderr() {
        System.setErr(new PrintStream(new Tee(real, copy), true, StandardCharsets.UTF_8));
    }

    /** @return standard error, captured from now on */
    static CapturedStderr start() {
        return new CapturedStderr();
    }

    /** @return what was written to standard error since {@link #start()} */
    String log() {
        synchronized (copy) {
            return copy.toString(StandardCharsets.UTF_8);
        }
    }

    /** Puts the real standard error back. */
    @Override
    public void close() {
        System.setErr(real);
    }

    /** Writes to the real standard error and to the buffer. */
    private static final class Tee extends OutputStream {
        private final OutputStream out;
        private final ByteArrayOutputStream copy;

        Tee(OutputStream out, ByteArrayOutputStream copy) {
            this.out = out;
            this.copy = copy;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (copy) {
                copy.write(b, off, len);
            }
            synchronized (this) {
                try {
                    out.write(b, off, len);
                } catch (IOException e) {
                    // standard error closed: the copy is what the test reads
                }
            }
        }

        @Override
        public void flush() {
            try {
                out.flush();
            } catch (IOException e) {
                // as above
            }
        }
    }
}

package io.disco.testservers;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The smallest Redis client the test servers need to start, watch and drive {@code redis-server} processes without a
 * client library: one socket speaking RESP2, one command at a time, every connect and read bounded by a timeout (a
 * frozen server accepts connections, in the kernel, but answers nothing). Replies map to Java as: simple string and
 * bulk string to {@link String} (UTF-8), integer to {@link Long}, array to {@link List}, null bulk or array to
 * {@code null}; an error reply is thrown as {@link ErrorReply}. Not thread-safe.
 */
final class Resp implements Closeable {

    /** An error reply ({@code -ERR ...}, {@code -MOVED ...}, {@code -LOADING ...}); its message is the reply's text. */
    static final class ErrorReply extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ErrorReply(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private Resp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /**
     * Connects to {@code host:port}; connecting and every later reply are bounded by {@code timeout}.
     *
     * @throws UncheckedIOException if it cannot connect within the timeout
     */
    static Resp connect(String host, int port, Duration timeout) {
        Socket socket = new Socket();
        try {
            int millis = Math.toIntExact(Math.max(1, timeout.toMillis()));
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.setTcpNoDelay(true);
            return new Resp(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // nothing was sent
            }
            throw new UncheckedIOException("cannot connect to Redis at " + host + ":" + port + ": " + e, e);
        }
    }

    /** One command on a connection of its own, closed after the reply. */
    static Object call(String host, int port, Duration timeout, String... args) {
        try (Resp resp = connect(host, port, timeout)) {
            return resp.call(args);
        }
    }

    /**
     * Sends one command and reads its reply.
     *
     * @return the reply, mapped as the class documentation says
     * @throws ErrorReply if the server answered with an error
     * @throws UncheckedIOException if the connection failed or no reply came within the timeout
     */
    Object call(String... args) {
        try {
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                request.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
                request.write(bytes);
                request.write('\r');
                request.write('\n');
            }
            out.write(request.toByteArray());
            out.flush();
            return read();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Redis at " + socket.getRemoteSocketAddress() + " did not answer " + args[0] + ": " + e, e);
        }
    }

    private Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("the server closed the connection");
        }
        String line = line();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new ErrorReply(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                if (bytes.length < length + 2) {
                    throw new EOFException("the server closed the connection inside a reply");
                }
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    try {
                        items.add(read());
                    } catch (ErrorReply e) {
                        items.add(e); // an error inside an array (EXEC) is an item, not the reply
                    }
                }
                return items;
            }
            default:
                throw new IOException("not a RESP2 reply: type byte " + type + ", line " + line);
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the server closed the connection inside a reply");
            }
            if (b == '\r') {
                if (in.read() != '\n') {
                    throw new IOException("a RESP line not ended by CRLF");
                }
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a socket: nothing to do about it
        }
    }
}

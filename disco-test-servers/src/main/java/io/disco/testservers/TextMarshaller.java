package io.disco.testservers;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A gRPC marshaller of plain UTF-8 text, for tests that write their gRPC methods by hand instead of generating them
 * with protoc:
 *
 * <pre>{@code
 * MethodDescriptor.<String, String>newBuilder().setType(MethodType.UNARY)
 *         .setFullMethodName(MethodDescriptor.generateFullMethodName("disco.test.Resource", "Write"))
 *         .setRequestMarshaller(TextMarshaller.TEXT).setResponseMarshaller(TextMarshaller.TEXT).build();
 * }</pre>
 */
public final class TextMarshaller implements MethodDescriptor.Marshaller<String> {

    /** The marshaller: it keeps no state. */
    public static final TextMarshaller TEXT = new TextMarshaller();

    private TextMarshaller() {}

    /**
     * @param value the message
     * @return its UTF-8 bytes
     */
    @Override
    public InputStream stream(String value) {
        return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param stream the message's bytes
     * @return the message, read as UTF-8
     * @throws UncheckedIOException if the stream cannot be read
     */
    @Override
    public String parse(InputStream stream) {
        try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

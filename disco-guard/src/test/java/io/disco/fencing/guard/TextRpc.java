package io.disco.fencing.guard;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Hand-written gRPC methods of plain text messages, for tests without protoc. */
final class TextRpc {

    static final String SERVICE = "disco.test.Resource";

    private static final MethodDescriptor.Marshaller<String> TEXT = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private TextRpc() {
    }

    static MethodDescriptor<String, String> method(MethodDescriptor.MethodType type, String name) {
        return MethodDescriptor.<String, String>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(TEXT)
                .setResponseMarshaller(TEXT)
                .build();
    }
}

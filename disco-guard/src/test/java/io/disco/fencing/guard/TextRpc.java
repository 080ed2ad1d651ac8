package io.disco.fencing.guard;

import io.disco.testservers.TextMarshaller;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/** Hand-written gRPC methods of plain text messages, for tests without protoc. */
final class TextRpc {

    static final String SERVICE = "disco.test.Resource";

    private TextRpc() {}

    static MethodDescriptor<String, String> method(MethodDescriptor.MethodType type, String name) {
        return MethodDescriptor.<String, String>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(TextMarshaller.TEXT)
                .setResponseMarshaller(TextMarshaller.TEXT)
                .build();
    }

    /** A started Netty server on a free loopback port serving {@code service} through {@code interceptor}. */
    static Server serve(ServerServiceDefinition service, ServerInterceptor interceptor) throws IOException {
        return NettyServerBuilder.forAddress(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
                .addService(ServerInterceptors.intercept(service, interceptor))
                .build()
                .start();
    }

    /** A plaintext channel to {@code server}. */
    static ManagedChannel channelTo(Server server) {
        return Grpc.newChannelBuilderForAddress(
                        InetAddress.getLoopbackAddress().getHostAddress(),
                        server.getPort(),
                        InsecureChannelCredentials.create())
                .build();
    }
}

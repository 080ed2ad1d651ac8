package io.disco.fencing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Metadata;
import org.junit.jupiter.api.Test;

class FencingGrpcTest {

    @Test
    void keyIsTheLowerCaseAsciiName() {
        assertEquals("x-fencing-token", FencingGrpc.KEY.name());
    }

    @Test
    void metadataRoundTrips() {
        Metadata m = FencingGrpc.metadata(FencingToken.of(51));
        assertEquals("51", m.get(FencingGrpc.KEY));
        assertEquals(FencingToken.of(51), FencingGrpc.fromMetadata(m));
    }

    @Test
    void fromMetadataTakesExactlyOneValue() {
        assertEquals(
                "missing x-fencing-token metadata",
                assertThrows(MalformedTokenException.class, () -> FencingGrpc.fromMetadata(new Metadata()))
                        .getMessage());
        Metadata twice = FencingGrpc.metadata(FencingToken.of(5));
        twice.put(FencingGrpc.KEY, "5");
        assertEquals(
                "repeated x-fencing-token metadata: send exactly one fencing token",
                assertThrows(MalformedTokenException.class, () -> FencingGrpc.fromMetadata(twice))
                        .getMessage());
        Metadata hex = new Metadata();
        hex.put(FencingGrpc.KEY, "0x10");
        assertThrows(MalformedTokenException.class, () -> FencingGrpc.fromMetadata(hex));
    }
}

package io.disco.examples.lock.grpc.pb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void messagesSurviveTheWire() {
        var request = new ResourceGrpc.WriteRequest("A \"quoted\"\n\\", "données ✓");
        assertEquals(request, ResourceGrpc.WRITE.parseRequest(ResourceGrpc.WRITE.streamRequest(request)));
        var reply = new ResourceGrpc.WriteReply(Long.MAX_VALUE, "ok");
        assertEquals(reply, ResourceGrpc.WRITE.parseResponse(ResourceGrpc.WRITE.streamResponse(reply)));
    }

    @Test
    void malformedJsonIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":}"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1"));
        assertThrows(IllegalArgumentException.class, () -> Json.number(Json.parse("{\"a\":\"1\"}"), "a"));
    }
}

package io.disco.fencing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class FencingHttpTest {

    @Test
    void injectSetsExactlyOneHeaderReplacingAnEarlierOne() {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1/"))
                .header(FencingHttp.HEADER, "1")
                .header(FencingHttp.HEADER, "2");
        FencingHttp.inject(b, FencingToken.of(34));
        assertEquals(List.of("34"), b.build().headers().allValues(FencingHttp.HEADER));
        FencingHttp.inject(b, FencingToken.of(51));
        assertEquals(List.of("51"), b.build().headers().allValues(FencingHttp.HEADER));
    }

    @Test
    void parseHeaderTakesExactlyOneValue() {
        assertEquals(FencingToken.of(51), FencingHttp.parseHeader(List.of("51")));
        assertEquals(
                "missing X-Fencing-Token header",
                assertThrows(MalformedTokenException.class, () -> FencingHttp.parseHeader(List.of()))
                        .getMessage());
        assertEquals(
                "missing X-Fencing-Token header",
                assertThrows(MalformedTokenException.class, () -> FencingHttp.parseHeader(null))
                        .getMessage());
        assertEquals(
                "repeated X-Fencing-Token header: send exactly one fencing token",
                assertThrows(MalformedTokenException.class, () -> FencingHttp.parseHeader(List.of("5", "5")))
                        .getMessage());
        assertEquals(
                "fencing token has a sign '-' at index 0: a fencing token is a plain decimal number",
                assertThrows(MalformedTokenException.class, () -> FencingHttp.parseHeader(List.of("-1")))
                        .getMessage());
    }
}

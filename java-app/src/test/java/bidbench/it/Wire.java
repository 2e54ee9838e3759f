package bidbench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Assertions for the wire rules every response must follow (contract/README.md, docs/design.md §2.4). */
final class Wire {

    static final String TIMESTAMP = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Wire() {}

    static void assertWireRules(RawHttp.Response response) {
        assertEquals("application/json", response.header("Content-Type"), "Content-Type");
        assertEquals(String.valueOf(response.body().length), response.header("Content-Length"), "Content-Length");
        assertNull(response.header("Transfer-Encoding"), "no chunked responses");
        assertNotNull(response.header("Date"), "Date header");
        String timing = response.header("Server-Timing");
        assertNotNull(timing, "Server-Timing header");
        assertTrue(timing.matches("db;dur=[0-9]+\\.[0-9]{3}, app;dur=[0-9]+\\.[0-9]{3}"), timing);
        String server = response.header("Server");
        assertTrue(server == null || !server.matches(".*[0-9].*"), "no server version: " + server);
        String text = response.text();
        assertTrue(!text.endsWith("\n") && !text.contains("\": ") && !text.contains(", \""), "compact JSON: " + text);
    }

    static JsonNode json(RawHttp.Response response) throws IOException {
        assertWireRules(response);
        return MAPPER.readTree(response.body());
    }

    static JsonNode expect(RawHttp.Response response, int status) throws IOException {
        assertEquals(status, response.status(), () -> "status of " + response.text());
        return json(response);
    }

    static void expectError(RawHttp.Response response, int status, String code, String message) throws IOException {
        JsonNode body = expect(response, status);
        assertEquals("{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}", response.text());
        assertEquals(List.of("error"), fields(body));
    }

    static List<String> fields(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }
}

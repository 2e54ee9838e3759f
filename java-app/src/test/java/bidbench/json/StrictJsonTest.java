package bidbench.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.http.ApiException;
import com.fasterxml.jackson.core.JsonToken;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class StrictJsonTest {

    private static final String NOT_UTF8 = "request body is not valid UTF-8";
    private static final String NOT_JSON = "request body is not valid JSON";
    private static final String NOT_OBJECT = "request body must be a JSON object";

    private static Map<String, Object> parse(String json) {
        return StrictJson.parseObject(json.getBytes(StandardCharsets.UTF_8));
    }

    private static void assertRejected(String message, byte[] body) {
        ApiException e = assertThrows(ApiException.class, () -> StrictJson.parseObject(body));
        assertEquals(400, e.status());
        assertEquals("bad_request", e.code());
        assertEquals(message, e.getMessage());
    }

    private static void assertRejected(String message, String body) {
        assertRejected(message, body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void keepsTopLevelValuesByKind() {
        Map<String, Object> object = parse(" {\"s\":\"x\",\"n\":5.0e0,\"t\":true,\"z\":null,\"o\":{\"a\":[1]},\"a\":[]}\r\n\t");
        assertEquals("x", object.get("s"));
        assertEquals(new JsonNumber("5.0e0"), object.get("n"));
        assertEquals(JsonToken.VALUE_TRUE, object.get("t"));
        assertEquals(JsonToken.VALUE_NULL, object.get("z"));
        assertEquals(JsonToken.START_OBJECT, object.get("o"));
        assertEquals(JsonToken.START_ARRAY, object.get("a"));
    }

    @Test
    void duplicateKeysLastWins() {
        assertEquals("b", parse("{\"k\":\"a\",\"k\":\"b\"}").get("k"));
    }

    @Test
    void validSurrogatePairsAndEscapes() {
        assertEquals("\uD83D\uDE00\u00e9\n", parse("{\"k\":\"\\ud83d\\ude00\\u00e9\\n\"}").get("k"));
    }

    @Test
    void invalidUtf8() {
        assertRejected(NOT_UTF8, new byte[] {'{', '"', (byte) 0xff, '"', ':', '1', '}'});
        assertRejected(NOT_UTF8, new byte[] {'{', '"', (byte) 0xc0, (byte) 0xaf, '"', ':', '1', '}'}); // overlong '/'
        assertRejected(NOT_UTF8, new byte[] {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}); // encoded surrogate
        assertRejected(NOT_UTF8, new byte[] {'"', (byte) 0xe2, (byte) 0x82, '"'}); // truncated sequence
        // UTF-8 is judged before JSON: this is not JSON either, but the UTF-8 message wins.
        assertRejected(NOT_UTF8, new byte[] {'{', (byte) 0x80});
    }

    @Test
    void byteOrderMarkIsInvalidJson() {
        byte[] bom = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf, '{', '}'};
        assertRejected(NOT_JSON, bom);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", " ", "{", "{\"a\":}", "{\"a\":1,}", "{'a':1}", "{a:1}", "{\"a\":01}", "{\"a\":NaN}", "{\"a\":.5}",
        "{\"a\":1.}", "{\"a\":+1}", "{\"a\":Infinity}", "{} {}", "{}x", "[] []", "5 6", "{}\u000c", "\u00a0{}",
        "{\"a\":\"\u0001\"}", "{\"a\":\"\\x41\"}", "{\"a\":1 /* c */}", "{\"a\":\"\\ud800\"}", "{\"\\udc00\":1}",
        "{\"a\":[\"\\ud800x\"]}", "{\"a\":{\"\\ude00\\ud83d\":1}}", "\"\\ud83d\"", "{\"a\":tru}", "nul",
    })
    void invalidJson(String body) {
        assertRejected(NOT_JSON, body);
    }

    @Test
    void nestingUpToThirtyTwoContainers() {
        String ok = "{\"a\":" + "[".repeat(31) + "]".repeat(31) + "}";
        assertTrue(parse(ok).containsKey("a"));
        String tooDeep = "{\"a\":" + "[".repeat(32) + "]".repeat(32) + "}";
        assertRejected(NOT_JSON, tooDeep);
        assertRejected(NOT_JSON, "[".repeat(33) + "]".repeat(33));
    }

    @ParameterizedTest
    @ValueSource(strings = {"[]", "[1]", "\"x\"", "5", "null", "true", "  false "})
    void notAnObject(String body) {
        assertRejected(NOT_OBJECT, body);
    }

    @Test
    void longNumbersAndNamesAreStillJson() {
        String digits = "9".repeat(60_000);
        assertEquals(new JsonNumber(digits), parse("{\"n\":" + digits + "}").get("n"));
        String name = "k".repeat(60_000);
        assertTrue(parse("{\"" + name + "\":1}").containsKey(name));
    }

    @Test
    void unpairedSurrogateDetection() {
        assertFalse(StrictJson.hasUnpairedSurrogate("a\uD83D\uDE00b"));
        assertTrue(StrictJson.hasUnpairedSurrogate("\uD83D"));
        assertTrue(StrictJson.hasUnpairedSurrogate("\uDE00"));
        assertTrue(StrictJson.hasUnpairedSurrogate("\uDE00\uD83D"));
        assertTrue(StrictJson.hasUnpairedSurrogate("\uD83D\uD83D\uDE00"));
    }
}

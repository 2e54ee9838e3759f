package bidbench.it;

import static bidbench.it.Wire.expectError;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hostile-input list (docs/design.md §2.4): each request must get exactly the contract's 4xx, with its exact
 * body, never a 500, a hang or a dropped connection. Nothing here reaches a write in the database.
 */
class HostileInputTest {

    private static final String JSON = "application/json";
    private static final String VALID_BID = "{\"bidder_id\":1,\"amount_cents\":100}";

    private static int port;

    record Case(String name, byte[] request, int status, String code, String message, String allow) {
        @Override
        public String toString() {
            return name;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        port = TestApp.port();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Case bad(String name, String method, String target, String contentType, byte[] body, String message) {
        return new Case(name, RawHttp.request(method, target, contentType, body), 400, "bad_request", message, null);
    }

    private static Case badJson(String name, String target, String body, String message) {
        return bad(name, "POST", target, JSON, utf8(body), message);
    }

    private static Case status(String name, byte[] request, int status, String code, String message) {
        return new Case(name, request, status, code, message, null);
    }

    static Stream<Case> cases() {
        String notJson = "request body is not valid JSON";
        String notUtf8 = "request body is not valid UTF-8";
        String notObject = "request body must be a JSON object";
        String unknown = "request body has unknown fields";
        byte[] tooBig = new byte[Byte.MAX_VALUE * 600];
        java.util.Arrays.fill(tooBig, (byte) ' ');
        byte[] atLimit = new byte[65536];
        java.util.Arrays.fill(atLimit, (byte) ' ');
        atLimit[0] = '{';
        atLimit[atLimit.length - 1] = '}';
        byte[] overLimit = RawHttp.concat(atLimit, new byte[] {' '});
        List<Case> cases = new ArrayList<>();

        // malformed JSON
        cases.add(badJson("truncated object", "/users", "{\"nickname\":", notJson));
        cases.add(badJson("empty body", "/users", "", notJson));
        cases.add(badJson("whitespace body", "/users", " \r\n", notJson));
        cases.add(badJson("single quotes", "/users", "{'nickname':'abc','region_id':1}", notJson));
        cases.add(badJson("trailing comma", "/users", "{\"nickname\":\"abc\",\"region_id\":1,}", notJson));
        cases.add(badJson("two values", "/users", "{} {}", notJson));
        cases.add(badJson("trailing garbage", "/items/1/bids", VALID_BID + "x", notJson));
        cases.add(badJson("comment", "/items/1/bids", "{\"bidder_id\":1/*x*/,\"amount_cents\":5}", notJson));
        cases.add(badJson("NaN", "/items/1/bids", "{\"bidder_id\":1,\"amount_cents\":NaN}", notJson));
        cases.add(badJson("leading zero", "/items/1/bids", "{\"bidder_id\":01,\"amount_cents\":5}", notJson));
        cases.add(badJson("raw NUL byte in string", "/users", "{\"nickname\":\"a\u0000b\",\"region_id\":1}", notJson));
        cases.add(bad("BOM", "POST", "/users", JSON, RawHttp.concat(new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf},
                utf8("{\"nickname\":\"abc\",\"region_id\":1}")), notJson));
        cases.add(badJson("33 nested containers", "/users", "{\"x\":" + "[".repeat(32) + "]".repeat(32) + "}", notJson));
        cases.add(badJson("lone high surrogate", "/users", "{\"nickname\":\"\\ud800\",\"region_id\":1}", notJson));
        cases.add(badJson("lone low surrogate in key", "/users", "{\"\\udc00\":1}", notJson));
        cases.add(badJson("lone surrogate nested", "/users", "{\"x\":[{\"y\":\"\\ud83d\"}]}", notJson));
        // UTF-8
        cases.add(bad("invalid UTF-8 byte", "POST", "/users", JSON,
                new byte[] {'{', '"', 'n', '"', ':', '"', (byte) 0xff, '"', '}'}, notUtf8));
        cases.add(bad("overlong UTF-8", "POST", "/users", JSON, new byte[] {'"', (byte) 0xc0, (byte) 0xaf, '"'}, notUtf8));
        cases.add(bad("UTF-8 encoded surrogate", "PUT", "/items/1", JSON,
                new byte[] {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, notUtf8));
        cases.add(bad("latin-1 body", "PUT", "/items/1", "application/json; charset=latin1",
                "{\"title\":\"caf\u00e9\",\"description\":\"\"}".getBytes(StandardCharsets.ISO_8859_1), notUtf8));
        // not an object
        cases.add(badJson("array", "/users", "[]", notObject));
        cases.add(badJson("string", "/users", "\"abc\"", notObject));
        cases.add(badJson("null", "/users", "null", notObject));
        cases.add(badJson("number", "/items/1/bids", "5", notObject));
        // unknown fields
        cases.add(badJson("unknown field", "/users", "{\"nickname\":\"abc\",\"region_id\":1,\"admin\":true}", unknown));
        cases.add(badJson("case matters", "/users", "{\"Nickname\":\"abc\",\"region_id\":1}", unknown));
        cases.add(badJson("32 nested containers, unknown key", "/users",
                "{\"x\":" + "[".repeat(31) + "]".repeat(31) + "}", unknown));
        // missing and wrong types
        cases.add(badJson("missing field", "/users", "{\"region_id\":1}", "missing field: nickname"));
        cases.add(badJson("empty object", "/items", "{}", "missing field: seller_id"));
        cases.add(badJson("null is invalid", "/users", "{\"nickname\":null,\"region_id\":1}", "invalid field: nickname"));
        cases.add(badJson("number as string", "/users", "{\"nickname\":\"abc\",\"region_id\":\"1\"}", "invalid field: region_id"));
        cases.add(badJson("boolean id", "/items/1/bids", "{\"bidder_id\":true,\"amount_cents\":5}", "invalid field: bidder_id"));
        cases.add(badJson("nickname number", "/users", "{\"nickname\":5,\"region_id\":1}", "invalid field: nickname"));
        cases.add(badJson("nickname pattern", "/users", "{\"nickname\":\"a b\",\"region_id\":1}", "invalid field: nickname"));
        cases.add(badJson("fractional id", "/items/1/bids", "{\"bidder_id\":1.5,\"amount_cents\":5}", "invalid field: bidder_id"));
        cases.add(badJson("negative cents", "/items/1/bids", "{\"bidder_id\":1,\"amount_cents\":-5}", "invalid field: amount_cents"));
        cases.add(badJson("zero cents", "/items/1/bids", "{\"bidder_id\":1,\"amount_cents\":0}", "invalid field: amount_cents"));
        // huge numbers
        cases.add(badJson("1e400", "/items/1/bids", "{\"bidder_id\":1,\"amount_cents\":1e400}", "invalid field: amount_cents"));
        cases.add(badJson("beyond long", "/items/1/bids", "{\"bidder_id\":99999999999999999999999,\"amount_cents\":5}",
                "invalid field: bidder_id"));
        cases.add(badJson("beyond int id", "/items/1/bids", "{\"bidder_id\":2147483648,\"amount_cents\":5}",
                "invalid field: bidder_id"));
        cases.add(badJson("cents above limit", "/items/1/bids", "{\"bidder_id\":1,\"amount_cents\":100000000001}",
                "invalid field: amount_cents"));
        cases.add(badJson("absurd exponent", "/items/1/bids", "{\"bidder_id\":1e9999999999,\"amount_cents\":5}",
                "invalid field: bidder_id"));
        cases.add(badJson("60000 digits", "/items/1/bids", "{\"bidder_id\":" + "9".repeat(60_000) + ",\"amount_cents\":5}",
                "invalid field: bidder_id"));
        cases.add(badJson("duration too short", "/items", "{\"seller_id\":1,\"category_id\":1,\"title\":\"t\","
                + "\"description\":\"\",\"initial_price_cents\":1,\"duration_seconds\":59}", "invalid field: duration_seconds"));
        // strings
        cases.add(bad("escaped NUL in title", "PUT", "/items/1", JSON,
                utf8("{\"title\":\"a\\u0000\",\"description\":\"\"}"), "invalid field: title"));
        cases.add(bad("empty title", "PUT", "/items/1", JSON, utf8("{\"title\":\"\",\"description\":\"\"}"),
                "invalid field: title"));
        cases.add(bad("201 code point title", "PUT", "/items/1", JSON,
                utf8("{\"title\":\"" + "\uD83D\uDE00".repeat(201) + "\",\"description\":\"\"}"), "invalid field: title"));
        cases.add(bad("description too long", "PUT", "/items/1", JSON,
                utf8("{\"title\":\"t\",\"description\":\"" + "x".repeat(10_001) + "\"}"), "invalid field: description"));
        // paging
        for (String query : List.of("limit=0", "limit=101", "limit=-1", "limit=abc", "limit=1e2", "limit=%31",
                "limit=1&limit=2", "limit=", "limit=9999999999", "offset=-1&limit=0")) {
            cases.add(bad("bids ?" + query, "GET", "/items/1/bids?" + query, null, null, "invalid query parameter: limit"));
        }
        for (String query : List.of("offset=-1", "offset=10001", "offset=x", "offset=1&offset=1", "limit=5&offset=1.5")) {
            cases.add(bad("category items ?" + query, "GET", "/categories/1/items?" + query, null, null,
                    "invalid query parameter: offset"));
        }
        // path ids
        for (String id : List.of("abc", "0", "-1", "2147483648", "99999999999", "1.0", "%31", "1;x", "+1", "1e3")) {
            cases.add(bad("item id " + id, "GET", "/items/" + id, null, null, "invalid path parameter: id"));
        }
        cases.add(bad("user id abc", "GET", "/users/abc", null, null, "invalid path parameter: id"));
        cases.add(bad("category id x", "GET", "/categories/x/items?limit=0", null, null, "invalid path parameter: id"));
        cases.add(bad("bid on id x before content type", "POST", "/items/x/bids", "text/plain", utf8("x"),
                "invalid path parameter: id"));
        // content type
        for (String type : new String[] {null, "text/plain", "application/x-www-form-urlencoded", "application/jsonx",
            "application/json-patch+json"}) {
            cases.add(status("content type " + type, RawHttp.request("POST", "/users", type, utf8("{]")),
                    415, "unsupported_media_type", "content type must be application/json"));
        }
        cases.add(bad("content type with parameters passes", "POST", "/users", " Application/JSON ; charset=utf-8",
                utf8("{}"), "missing field: nickname"));
        // body size
        cases.add(status("declared body over the limit", RawHttp.request("POST", "/users", JSON, overLimit),
                413, "payload_too_large", "request body exceeds 65536 bytes"));
        cases.add(status("chunked body over the limit", RawHttp.chunked("POST", "/users", JSON, tooBig, 4096),
                413, "payload_too_large", "request body exceeds 65536 bytes"));
        cases.add(status("413 before route", RawHttp.request("POST", "/nowhere", JSON, overLimit),
                413, "payload_too_large", "request body exceeds 65536 bytes"));
        cases.add(status("413 on GET too", RawHttp.chunked("GET", "/health", JSON, tooBig, 60_000),
                413, "payload_too_large", "request body exceeds 65536 bytes"));
        cases.add(bad("body exactly at the limit", "POST", "/users", JSON, atLimit, "missing field: nickname"));
        cases.add(status("declared length only", utf8("POST /users HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"),
                413, "payload_too_large", "request body exceeds 65536 bytes"));
        // routes and methods
        for (String path : List.of("/", "/nope", "/health/", "//health", "/items/", "/items//bids", "/items/1/bids/",
                "/Items/1", "/users/1/extra", "/%68ealth")) {
            cases.add(status("route " + path, RawHttp.request("GET", path, null, null), 404, "not_found", "route not found"));
        }
        cases.add(status("404 before 405", RawHttp.request("PATCH", "/nope", null, null), 404, "not_found", "route not found"));
        cases.add(new Case("PATCH item", RawHttp.request("PATCH", "/items/1", null, null), 405, "method_not_allowed",
                "method not allowed", "GET, PUT, DELETE"));
        cases.add(new Case("405 before path id", RawHttp.request("POST", "/items/abc", JSON, utf8("{")), 405,
                "method_not_allowed", "method not allowed", "GET, PUT, DELETE"));
        cases.add(new Case("DELETE users", RawHttp.request("DELETE", "/users", null, null), 405, "method_not_allowed",
                "method not allowed", "POST"));
        cases.add(new Case("PUT bids", RawHttp.request("PUT", "/items/1/bids", JSON, utf8(VALID_BID)), 405,
                "method_not_allowed", "method not allowed", "GET, POST"));
        cases.add(new Case("OPTIONS regions", RawHttp.request("OPTIONS", "/regions", null, null), 405, "method_not_allowed",
                "method not allowed", "GET"));
        // Step 0 (contract "Request syntax"): what Jetty passes on but the contract refuses, and what Jetty's
        // parser refuses, both the contract's 400 (Jetty said 505 with code internal_error, 426 or 431).
        String badSyntax = "bad request";
        cases.add(status("lower-case get", RawHttp.request("get", "/health", null, null), 400, "bad_request", badSyntax));
        cases.add(status("unknown method", RawHttp.request("FOO", "/health", null, null), 400, "bad_request", badSyntax));
        cases.add(status("CONNECT", utf8("CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: close\r\n\r\n"), 400,
                "bad_request", badSyntax));
        cases.add(status("asterisk form", utf8("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 400, "bad_request",
                badSyntax));
        cases.add(status("HTTP/0.9 form", utf8("GET /health\r\n\r\n"), 400, "bad_request", badSyntax));
        cases.add(status("HTTP/1.2", utf8("GET /health HTTP/1.2\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 400, "bad_request",
                badSyntax));
        cases.add(status("HTTP/2.0", utf8("GET /health HTTP/2.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 400, "bad_request",
                badSyntax));
        cases.add(status("two Host headers", utf8("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n"), 400,
                "bad_request", badSyntax));
        cases.add(status("a 20 KB header", utf8("GET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\nX: " + "a".repeat(20_000)
                + "\r\n\r\n"), 400, "bad_request", badSyntax));
        cases.add(status("unknown expectation", utf8("GET /health HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nConnection: close\r\n\r\n"), 417,
                "expectation_failed", "expectation failed"));
        // Issue #42: an encoded NUL in the path and raw bytes above 0x7F anywhere in the target are malformed
        // targets (Node's parser and nginx refuse them); an encoded NUL in the query is opaque bytes.
        cases.add(status("encoded NUL after an id", RawHttp.request("GET", "/items/1%00", null, null), 400, "bad_request",
                badSyntax));
        cases.add(status("encoded NUL as the id", RawHttp.request("GET", "/items/%00", null, null), 400, "bad_request",
                badSyntax));
        cases.add(status("encoded NUL after a route", RawHttp.request("GET", "/health%00", null, null), 400, "bad_request",
                badSyntax));
        cases.add(status("encoded NUL in limit", RawHttp.request("GET", "/items/1/bids?limit=%00", null, null), 400,
                "bad_request", "invalid query parameter: limit"));
        cases.add(status("fullwidth digit as the id", utf8("GET /items/\uFF11 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
                400, "bad_request", badSyntax));
        cases.add(status("Arabic-Indic digit as the id", utf8("GET /items/\u0661 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
                400, "bad_request", badSyntax));
        cases.add(status("fullwidth digit in limit",
                utf8("GET /categories/1/items?limit=\uFF15 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
                400, "bad_request", badSyntax));
        cases.add(status("raw 0xFF in the path", RawHttp.request("GET", "/items/\u00ff", null, null), 400, "bad_request",
                badSyntax));
        cases.add(status("raw 0xFF in an ignored parameter", RawHttp.request("GET", "/health?x=\u00ff", null, null), 400,
                "bad_request", badSyntax));
        // '#' is raw (Jetty parses a fragment off; the app puts it back): the limit value is "5#frag".
        cases.add(status("fragment in the query", RawHttp.request("GET", "/categories/1/items?limit=5#frag", null, null),
                400, "bad_request", "invalid query parameter: limit"));
        cases.add(status("fragment in the path", RawHttp.request("GET", "/health#x", null, null), 404, "not_found",
                "route not found"));
        cases.add(status("absolute form, unknown route", utf8("GET http://example.invalid/nope HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\nConnection: close\r\n\r\n"), 404, "not_found", "route not found"));
        cases.add(new Case("GET items", RawHttp.request("GET", "/items", null, null), 405, "method_not_allowed",
                "method not allowed", "POST"));
        // valid input that reaches the database and finds nothing
        cases.add(status("bid on a missing item", RawHttp.request("POST", "/items/2147483647/bids", JSON, utf8(VALID_BID)),
                404, "not_found", "item not found"));
        cases.add(status("delete a missing item", RawHttp.request("DELETE", "/items/2147483647", null, utf8("ignored")),
                404, "not_found", "item not found"));
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void getsTheContractsAnswer(Case c) throws Exception {
        RawHttp.Response response = RawHttp.send(port, c.request());
        expectError(response, c.status(), c.code(), c.message());
        assertEquals(c.allow(), response.header("Allow"));
    }

    /**
     * A body shorter than its Content-Length, then the client's half-close: the contract allows 400 or a close
     * without an answer (nginx's only choice); Jetty can still answer, so it does.
     */
    @Test
    void aBodyCutShortByAHalfCloseIs400() throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(utf8("POST /users HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 50\r\n\r\n{\"nickname\""));
            socket.shutdownOutput();
            expectError(RawHttp.read(socket.getInputStream()), 400, "bad_request", "bad request");
        }
    }
}

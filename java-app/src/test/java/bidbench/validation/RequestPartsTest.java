package bidbench.validation;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import bidbench.http.ApiException;
import bidbench.model.Paging;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Path ids, paging queries and content types: contract steps 4 to 6. */
class RequestPartsTest {

    @ParameterizedTest
    @CsvSource({"1,1", "42,42", "2147483647,2147483647", "0000000001,1", "007,7"})
    void validPathIds(String raw, int id) {
        assertEquals(id, PathId.parse(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0000000000", "2147483648", "9999999999", "00000000001", "-1", "+1", "1.0", "1e3",
        "abc", "%31", " 1", "1 ", "１", "٣"})
    void invalidPathIds(String raw) {
        ApiException e = assertThrows(ApiException.class, () -> PathId.parse(raw));
        assertEquals("invalid path parameter: id", e.getMessage());
    }

    @Test
    void pagingDefaultsAndValues() {
        assertEquals(new Paging(20, 0), PagingQuery.parse(null));
        assertEquals(new Paging(20, 0), PagingQuery.parse(""));
        assertEquals(new Paging(20, 0), PagingQuery.parse("foo=bar&&x"));
        assertEquals(new Paging(1, 10000), PagingQuery.parse("limit=1&offset=10000"));
        assertEquals(new Paging(100, 0), PagingQuery.parse("offset=0&limit=100&other=1&other=2"));
        assertEquals(new Paging(5, 0), PagingQuery.parse("limit=005"));
        // Names are not decoded either: this is an unknown parameter, not limit.
        assertEquals(new Paging(20, 0), PagingQuery.parse("lim%69t=0"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"limit=0", "limit=101", "limit=", "limit", "limit=-1", "limit=+1", "limit=1.0",
        "limit=1e1", "limit=%31", "limit=1&limit=1", "limit=1000000000", "limit= 1", "limit=abc&offset=-1",
        "offset=-1&limit=0", "limit=1=1"})
    void invalidLimit(String query) {
        ApiException e = assertThrows(ApiException.class, () -> PagingQuery.parse(query));
        assertEquals("invalid query parameter: limit", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"offset=-1", "offset=10001", "offset=", "offset", "offset=1&offset=2", "limit=5&offset=x",
        "offset=999999999"})
    void invalidOffset(String query) {
        ApiException e = assertThrows(ApiException.class, () -> PagingQuery.parse(query));
        assertEquals("invalid query parameter: offset", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"application/json", "APPLICATION/JSON", " application/json ", "application/json; charset=utf-8",
        "application/json;charset=latin1", "Application/Json ;x=y"})
    void jsonContentTypes(String header) {
        assertDoesNotThrow(() -> ContentType.requireJson(header));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "text/plain", "application/jsonp", "application/json-patch+json", "application/x-json",
        "application/*", "json", "application /json"})
    void otherContentTypes(String header) {
        ApiException e = assertThrows(ApiException.class, () -> ContentType.requireJson(header));
        assertEquals(415, e.status());
        assertEquals("content type must be application/json", e.getMessage());
    }

    @Test
    void missingContentType() {
        assertEquals(415, assertThrows(ApiException.class, () -> ContentType.requireJson(null)).status());
    }
}

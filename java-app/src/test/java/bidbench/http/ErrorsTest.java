package bidbench.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The error table of contract/README.md, status by status. */
class ErrorsTest {

    private static String body(ApiException e) {
        return new String(Reply.error(e).body(), StandardCharsets.UTF_8);
    }

    @Test
    void statusesCodesAndMessages() {
        assertEquals("{\"error\":{\"code\":\"bad_request\",\"message\":\"missing field: title\"}}",
                body(Errors.missingField("title")));
        assertEquals(404, Errors.notFound("item not found").status());
        ApiException notAllowed = Errors.methodNotAllowed("GET, POST");
        assertEquals(405, notAllowed.status());
        assertEquals("GET, POST", Reply.error(notAllowed).allow());
        assertEquals("{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"method not allowed\"}}", body(notAllowed));
        assertEquals("{\"error\":{\"code\":\"conflict\",\"message\":\"bid must be at least 101 cents\"}}",
                body(Errors.conflict("bid must be at least 101 cents")));
        assertEquals("{\"error\":{\"code\":\"payload_too_large\",\"message\":\"request body exceeds 65536 bytes\"}}",
                body(Errors.payloadTooLarge()));
        assertEquals(413, Errors.payloadTooLarge().status());
        assertEquals("{\"error\":{\"code\":\"unsupported_media_type\",\"message\":\"content type must be application/json\"}}",
                body(Errors.unsupportedMediaType()));
        assertEquals(415, Errors.unsupportedMediaType().status());
        assertEquals("{\"error\":{\"code\":\"db_unavailable\",\"message\":\"database unavailable\"}}",
                body(Errors.databaseUnavailable()));
        assertEquals(503, Errors.databaseUnavailable().status());
        assertEquals("{\"error\":{\"code\":\"internal_error\",\"message\":\"internal error\"}}", body(Errors.internal()));
        assertEquals(500, Errors.internal().status());
    }

    @Test
    void jettyLevelErrorsUseTheSameShape() {
        assertEquals("{\"error\":{\"code\":\"bad_request\",\"message\":\"bad request\"}}",
                body(JsonErrorHandler.forStatus(400)));
        // What Jetty's parser refuses is the contract's step 0 answer, whatever status Jetty chose:
        // 505 once came out as a 5xx with code internal_error (issue #31).
        for (int status : new int[] {414, 426, 431, 501, 505}) {
            assertEquals(400, JsonErrorHandler.forStatus(status).status(), "status " + status);
            assertEquals("bad request", JsonErrorHandler.forStatus(status).getMessage(), "status " + status);
        }
        assertEquals("payload_too_large", JsonErrorHandler.forStatus(413).code());
        assertEquals("{\"error\":{\"code\":\"expectation_failed\",\"message\":\"expectation failed\"}}",
                body(JsonErrorHandler.forStatus(417)));
        assertEquals("{\"error\":{\"code\":\"request_timeout\",\"message\":\"request timed out\"}}",
                body(JsonErrorHandler.forStatus(408)));
        assertEquals("internal_error", JsonErrorHandler.forStatus(500).code());
    }
}

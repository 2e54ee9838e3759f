package bidbench.http;

/** The contract's error table as factory methods, so every status/code pair is written once. */
public final class Errors {

    public static final int BODY_LIMIT_BYTES = 65536;

    private Errors() {}

    public static ApiException badRequest(String message) {
        return new ApiException(400, "bad_request", message, null);
    }

    public static ApiException notFound(String message) {
        return new ApiException(404, "not_found", message, null);
    }

    public static ApiException methodNotAllowed(String allow) {
        return new ApiException(405, "method_not_allowed", "method not allowed", allow);
    }

    /** Step 0: a request line, method, target or header the contract does not serve. */
    public static ApiException badSyntax() {
        return badRequest("bad request");
    }

    /** A body that stalled: Jetty's idle timeout passed while it was awaited. */
    public static ApiException requestTimeout() {
        return new ApiException(408, "request_timeout", "request timed out", null);
    }

    public static ApiException expectationFailed() {
        return new ApiException(417, "expectation_failed", "expectation failed", null);
    }

    public static ApiException conflict(String message) {
        return new ApiException(409, "conflict", message, null);
    }

    public static ApiException payloadTooLarge() {
        return new ApiException(413, "payload_too_large",
                "request body exceeds " + BODY_LIMIT_BYTES + " bytes", null);
    }

    public static ApiException unsupportedMediaType() {
        return new ApiException(415, "unsupported_media_type", "content type must be application/json", null);
    }

    public static ApiException internal() {
        return new ApiException(500, "internal_error", "internal error", null);
    }

    public static ApiException databaseUnavailable() {
        return new ApiException(503, "db_unavailable", "database unavailable", null);
    }

    /** Body-parsing messages, in the order the contract checks them (step 7). */
    public static ApiException invalidUtf8() {
        return badRequest("request body is not valid UTF-8");
    }

    public static ApiException invalidJson() {
        return badRequest("request body is not valid JSON");
    }

    public static ApiException notAnObject() {
        return badRequest("request body must be a JSON object");
    }

    public static ApiException unknownFields() {
        return badRequest("request body has unknown fields");
    }

    public static ApiException missingField(String name) {
        return badRequest("missing field: " + name);
    }

    public static ApiException invalidField(String name) {
        return badRequest("invalid field: " + name);
    }

    public static ApiException invalidPathId() {
        return badRequest("invalid path parameter: id");
    }

    public static ApiException invalidQuery(String name) {
        return badRequest("invalid query parameter: " + name);
    }
}

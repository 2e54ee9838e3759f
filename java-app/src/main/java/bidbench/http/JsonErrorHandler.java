package bidbench.http;

import bidbench.json.JsonViews;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors that Jetty answers itself, before the app sees a request (a malformed request line, headers
 * too large, an unparsable Content-Length): same body shape and Content-Type as the app's own errors,
 * instead of Jetty's HTML page.
 */
public final class JsonErrorHandler implements Request.Handler {

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        int status = response.getStatus();
        if (request.getAttribute(ErrorHandler.ERROR_EXCEPTION) instanceof HttpException httpException) {
            status = httpException.getCode();
            response.setStatus(status);
        }
        ApiException error = forStatus(status);
        byte[] body = JsonViews.error(error.code(), error.getMessage());
        response.getHeaders().put(AppHandler.CONTENT_TYPE_JSON);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }

    /** The contract's message where the status has one; otherwise the reason phrase. */
    static ApiException forStatus(int status) {
        return switch (status) {
            case 404 -> Errors.notFound("route not found");
            case 413 -> Errors.payloadTooLarge();
            case 415 -> Errors.unsupportedMediaType();
            // Jetty's own 503 is a request refused during the graceful stop, not a database problem.
            case 503 -> new ApiException(503, "db_unavailable", "service unavailable", null);
            default -> status >= 400 && status < 500
                    ? new ApiException(status, "bad_request", HttpStatus.getMessage(status).toLowerCase(java.util.Locale.ROOT), null)
                    : new ApiException(status, "internal_error", "internal error", null);
        };
    }
}

package bidbench.http;

import bidbench.json.JsonViews;
import bidbench.timing.RequestTiming;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors that Jetty answers itself, before the app sees a request (a malformed request line or header
 * section, another HTTP version, headers too large, an unknown Expect): the contract's step 0 answer
 * (contract/README.md, "Request syntax"), with the same body shape, Content-Type and Server-Timing as the
 * app's own errors, instead of Jetty's HTML page and its 414, 426, 431 or 505.
 */
public final class JsonErrorHandler implements Request.Handler {

    private static final String SERVER_TIMING = "Server-Timing";

    private final boolean serverTiming;

    public JsonErrorHandler(boolean serverTiming) {
        this.serverTiming = serverTiming;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        RequestTiming timing = RequestTiming.start(serverTiming);
        int status = response.getStatus();
        if (request.getAttribute(ErrorHandler.ERROR_EXCEPTION) instanceof HttpException httpException) {
            status = httpException.getCode();
        }
        ApiException error = forStatus(status);
        response.setStatus(error.status());
        byte[] body = JsonViews.error(error.code(), error.getMessage());
        response.getHeaders().put(AppHandler.CONTENT_TYPE_JSON);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        if (serverTiming) {
            response.getHeaders().put(SERVER_TIMING, timing.serverTimingHeader());
        }
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }

    /** The contract's answer for a status Jetty chose. */
    static ApiException forStatus(int status) {
        return switch (status) {
            case 404 -> Errors.notFound("route not found");
            case 408 -> Errors.requestTimeout();
            case 413 -> Errors.payloadTooLarge();
            case 415 -> Errors.unsupportedMediaType();
            case 417 -> Errors.expectationFailed();
            // Jetty's own 503 is a request refused during the graceful stop, not a database problem.
            case 503 -> new ApiException(503, "db_unavailable", "service unavailable", null);
            // 400, 414 (target too long), 426 (HTTP/2.0, the HTTP/2 preface), 431 (headers too large),
            // 501 (a transfer coding it does not know), 505 (no version, HTTP/1.2, HTTP/3.0): what the
            // parser refused is a request the contract does not serve, a 400 in every app.
            case 400, 414, 426, 431, 501, 505 -> Errors.badSyntax();
            default -> status >= 400 && status < 500 ? Errors.badSyntax() : Errors.internal();
        };
    }
}

package bidbench.http;

import bidbench.api.Api;
import bidbench.api.Call;
import bidbench.api.Endpoint;
import bidbench.db.SqlErrors;
import bidbench.json.StrictJson;
import bidbench.model.Paging;
import bidbench.timing.RequestTiming;
import bidbench.validation.Body;
import bidbench.validation.ContentType;
import bidbench.validation.PagingQuery;
import bidbench.validation.PathId;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one Jetty handler. It applies the contract's request-handling order (body size, route, method,
 * path id, query, content type, body) and answers with the first failure; then the endpoint does its
 * database work. It runs on a Jetty pool thread and blocks there on JDBC, which is what
 * JAVA_THREADS sizes; it never blocks on a client (the body is read with Jetty's demand callbacks).
 */
public final class AppHandler extends Handler.Abstract {

    static final HttpField CONTENT_TYPE_JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    private static final String SERVER_TIMING = "Server-Timing";
    private static final long DB_WARNING_INTERVAL_NANOS = 10_000_000_000L;

    private static final Logger LOG = LoggerFactory.getLogger(AppHandler.class);
    private static final Logger REQUESTS = LoggerFactory.getLogger("bidbench.request");

    private final Api api;
    private final boolean serverTiming;
    private final AtomicLong lastDbWarning = new AtomicLong(System.nanoTime() - DB_WARNING_INTERVAL_NANOS);

    public AppHandler(Api api, boolean serverTiming) {
        super(InvocationType.BLOCKING);
        this.api = api;
        this.serverTiming = serverTiming;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        boolean debug = REQUESTS.isDebugEnabled();
        RequestTiming timing = RequestTiming.start(serverTiming || debug);
        ApiException syntax = RequestSyntax.check(request);                          // 0. request syntax
        if (syntax != null) {
            if (HttpMethod.CONNECT.is(request.getMethod())) {
                // Jetty keeps a CONNECT's connection open for the tunnel it expects, whatever the client's
                // Connection header says; the test client then waited 30 s for the close. Node and nginx
                // close after their 400.
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            }
            send(request, response, callback, Reply.error(syntax), timing, debug);
            return true;
        }
        // 1. Body size. The body is read without holding this thread: when it has not all arrived,
        // the rest of the request runs later, on the thread of Jetty's demand callback.
        BodyReader.read(request, new BodyReader.Listener() {
            @Override
            public void onBody(byte[] body) {
                send(request, response, callback, handleBody(request, body, timing), timing, debug);
            }

            @Override
            public void onError(ApiException error) {
                if (error.status() == 408) {
                    // The rest of the stalled body will never be read: the connection cannot be reused.
                    response.getHeaders().put(HttpHeader.CONNECTION, "close");
                }
                send(request, response, callback, Reply.error(error), timing, debug);
            }

            @Override
            public void onAbort(Throwable failure) {
                // The client stopped sending its body (reset, closed): there is no one to answer.
                LOG.debug("request body read failed on {} {}", request.getMethod(),
                        request.getHttpURI().getPath(), failure);
                callback.failed(failure);
            }
        });
        return true;
    }

    /** Steps 2 to 8, once the body is there; every failure becomes the contract's answer. */
    private Reply handleBody(Request request, byte[] body, RequestTiming timing) {
        try {
            return dispatch(request, body, timing);
        } catch (ApiException e) {
            return Reply.error(e);
        } catch (SQLException e) {
            return Reply.error(databaseFailure(e));
        } catch (RuntimeException e) {
            LOG.error("internal error on {} {}", request.getMethod(), request.getHttpURI().getPath(), e);
            return Reply.error(Errors.internal());
        }
    }

    private Reply dispatch(Request request, byte[] bytes, RequestTiming timing) throws SQLException {
        String[] pathAndQuery = RequestSyntax.pathAndQuery(request.getHttpURI());
        Router.Match match = Router.match(pathAndQuery[0]);                          // 2. route
        if (match == null) {
            throw Errors.notFound("route not found");
        }
        Endpoint endpoint = api.find(match.route(), request.getMethod());            // 3. method
        if (endpoint == null) {
            throw Errors.methodNotAllowed(match.route().allow());
        }
        int id = match.rawId() == null ? 0 : PathId.parse(match.rawId());            // 4. path id
        Paging paging = endpoint.paged() ? PagingQuery.parse(pathAndQuery[1]) : null; // 5. query
        Body body = null;
        if (endpoint.schema() != null) {
            ContentType.requireJson(request.getHeaders().get(HttpHeader.CONTENT_TYPE)); // 6. content type
            body = endpoint.schema().validate(StrictJson.parseObject(bytes));        // 7. body
        }
        return endpoint.action().run(new Call(id, paging, body, timing, request.getBeginNanoTime())); // 8. database work
    }

    private ApiException databaseFailure(SQLException e) {
        if (SqlErrors.isUnavailable(e)) {
            // During an outage every request fails the same way; one line per interval is enough.
            long now = System.nanoTime();
            long last = lastDbWarning.get();
            if (now - last >= DB_WARNING_INTERVAL_NANOS && lastDbWarning.compareAndSet(last, now)) {
                LOG.warn("database unavailable: {}", e.getMessage());
            }
            return Errors.databaseUnavailable();
        }
        LOG.error("unexpected database error (SQLSTATE {})", e.getSQLState(), e);
        return Errors.internal();
    }

    private void send(Request request, Response response, Callback callback, Reply reply,
                      RequestTiming timing, boolean debug) {
        response.setStatus(reply.status());
        HttpFields.Mutable headers = response.getHeaders();
        headers.put(CONTENT_TYPE_JSON);
        headers.put(HttpHeader.CONTENT_LENGTH, reply.body().length);
        if (reply.allow() != null) {
            headers.put(HttpHeader.ALLOW, reply.allow());
        }
        if (serverTiming) {
            headers.put(SERVER_TIMING, timing.serverTimingHeader());
        }
        if (debug) {
            REQUESTS.debug("{} {} {} {}ms", request.getMethod(), request.getHttpURI().getPathQuery(),
                    reply.status(), RequestTiming.millis(timing.elapsedNanos()));
        }
        response.write(true, ByteBuffer.wrap(reply.body()), callback);
    }
}

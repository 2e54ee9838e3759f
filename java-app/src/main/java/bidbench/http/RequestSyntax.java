package bidbench.http;

import java.util.Set;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Request;

/**
 * Contract step 0, the part Jetty's parser lets through (contract/README.md, "Request syntax"). Jetty
 * itself refuses other HTTP versions, malformed header sections, a missing or doubled Host and unknown
 * expectations; {@link JsonErrorHandler} gives those the contract's answer.
 */
public final class RequestSyntax {

    /**
     * The registered methods of the contract: Node's {@code http.METHODS} (llhttp refuses every other
     * token before Node's app sees it), without CONNECT. Jetty passes any token on, so it is checked here.
     */
    static final Set<String> METHODS = Set.of(
            "ACL", "BIND", "CHECKOUT", "COPY", "DELETE", "GET", "HEAD", "LINK", "LOCK", "M-SEARCH", "MERGE",
            "MKACTIVITY", "MKCALENDAR", "MKCOL", "MOVE", "NOTIFY", "OPTIONS", "PATCH", "POST", "PROPFIND",
            "PROPPATCH", "PURGE", "PUT", "QUERY", "REBIND", "REPORT", "SEARCH", "SOURCE", "SUBSCRIBE", "TRACE",
            "UNBIND", "UNLINK", "UNLOCK", "UNSUBSCRIBE");

    private RequestSyntax() {}

    /** Null when the request may go on to step 1, otherwise the 400 to answer. */
    public static ApiException check(Request request) {
        // CONNECT is not in the set: this service is no proxy.
        if (!METHODS.contains(request.getMethod())) {
            return Errors.badSyntax();
        }
        String path = request.getHttpURI().getPath();
        // Asterisk form (OPTIONS *) and anything else that is no path. Absolute-form targets arrive here
        // with their path, like the origin form (RFC 9112 §3.2.2).
        if (path == null || !path.startsWith("/")) {
            return Errors.badSyntax();
        }
        HttpURI uri = request.getHttpURI();
        if (!isAscii(path) || !isAscii(uri.getQuery()) || !isAscii(uri.getFragment())) {
            return Errors.badSyntax();
        }
        return null;
    }

    /**
     * A request target is ASCII (RFC 9112 §3.2; other characters travel percent-encoded). Node's parser
     * refuses a raw byte above 0x7F anywhere in it before the app runs, so it cannot be an invalid id or an
     * ignored parameter here and a 400 there: Jetty passes such bytes on (decoded as UTF-8), and they are
     * refused here the same way (issue #42).
     */
    static boolean isAscii(String part) {
        if (part == null) {
            return true;
        }
        for (int i = 0; i < part.length(); i++) {
            if (part.charAt(i) > 0x7F) {
                return false;
            }
        }
        return true;
    }

    /**
     * The raw path and query, split at the first '?' only. A '#' has no meaning in the contract, but Jetty
     * parses a fragment off the target: put it back where the raw target had it, so that
     * {@code ?limit=5#frag} has the invalid limit "5#frag" (as in Node and PHP), not 5 (issue #31).
     */
    public static String[] pathAndQuery(HttpURI uri) {
        String path = uri.getPath();
        String query = uri.getQuery();
        String fragment = uri.getFragment();
        if (fragment == null) {
            return new String[] {path, query};
        }
        String raw = path + (query == null ? "" : "?" + query) + "#" + fragment;
        int q = raw.indexOf('?');
        return q < 0 ? new String[] {raw, null} : new String[] {raw.substring(0, q), raw.substring(q + 1)};
    }
}

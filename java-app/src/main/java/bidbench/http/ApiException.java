package bidbench.http;

/**
 * A contract error response (contract/README.md, error table). Thrown wherever a request is found
 * wanting and turned into {@code {"error":{"code":...,"message":...}}} by the handler.
 */
public final class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String allow;

    ApiException(int status, String code, String message, String allow) {
        // No stack trace: these are ordinary answers to bad input, and hostile traffic must stay cheap.
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.allow = allow;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    /** The {@code Allow} header value of a 405, otherwise null. */
    public String allow() {
        return allow;
    }
}

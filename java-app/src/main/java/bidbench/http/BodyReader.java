package bidbench.http;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.eclipse.jetty.server.Request;

/**
 * Contract step 1: reads a request body of at most {@link Errors#BODY_LIMIT_BYTES}. A declared
 * Content-Length above the limit is refused before a byte is read; a streamed (chunked) body is
 * counted as it arrives and refused as soon as it passes the limit, so nothing past it is buffered.
 */
public final class BodyReader {

    private static final byte[] EMPTY = new byte[0];
    private static final int CHUNK = 8192;

    private BodyReader() {}

    public static byte[] read(Request request) throws IOException {
        long declared = request.getLength();
        if (declared > Errors.BODY_LIMIT_BYTES) {
            throw Errors.payloadTooLarge();
        }
        if (declared == 0) {
            return EMPTY;
        }
        try (InputStream in = Request.asInputStream(request)) {
            return declared > 0 ? in.readNBytes((int) declared) : readStreamed(in);
        }
    }

    private static byte[] readStreamed(InputStream in) throws IOException {
        byte[] buffer = new byte[CHUNK];
        int size = 0;
        while (true) {
            if (size == buffer.length) {
                // Grow to at most limit + 1: one byte past the limit is enough to know it was passed.
                buffer = Arrays.copyOf(buffer, Math.min(buffer.length * 2, Errors.BODY_LIMIT_BYTES + 1));
            }
            int n = in.read(buffer, size, buffer.length - size);
            if (n < 0) {
                return Arrays.copyOf(buffer, size);
            }
            size += n;
            if (size > Errors.BODY_LIMIT_BYTES) {
                throw Errors.payloadTooLarge();
            }
        }
    }
}

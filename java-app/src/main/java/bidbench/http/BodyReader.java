package bidbench.http;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Contract step 1: reads a request body of at most {@link Errors#BODY_LIMIT_BYTES} without holding a
 * thread while the client is slow. A declared Content-Length above the limit is refused before a byte is
 * read; a streamed (chunked) body is counted as it arrives and refused as soon as it passes the limit, so
 * nothing past it is buffered.
 *
 * <p>Why not {@code Request.asInputStream}: a blocking read parks a Jetty pool thread for as long as the
 * client takes. ~31 clients that sent headers and part of a body, then held, took every thread of a
 * 32-thread pool and froze the app for everyone until Jetty's 30 s idle timeout (issue #31). This reader
 * uses Jetty 12's read/demand loop instead: it takes what has arrived, and when nothing has, it registers
 * a demand callback and returns, so the thread goes back to the pool. The callback runs when more bytes
 * arrive, or with a failure chunk when the connection idled out (then the request gets 408) or broke.
 */
public final class BodyReader {

    /** The outcome of one body read; exactly one method is called, once. */
    public interface Listener {
        /** The whole body, at most the limit. */
        void onBody(byte[] body);

        /** A contract error to answer instead: 413 (too large) or 408 (the body stalled). */
        void onError(ApiException error);

        /** The client went away mid-body (reset, closed): there is no one to answer. */
        void onAbort(Throwable failure);
    }

    private static final byte[] EMPTY = new byte[0];
    private static final int INITIAL = 8192;

    private final Request request;
    private final Listener listener;
    private byte[] buffer;
    private int size;

    private BodyReader(Request request, Listener listener, long declared) {
        this.request = request;
        this.listener = listener;
        // A declared length sizes the buffer exactly; a chunked body starts small and grows.
        this.buffer = new byte[declared > 0 ? (int) declared : INITIAL];
    }

    /** Reads the body and reports to the listener, on this thread or later on the one of a demand callback. */
    public static void read(Request request, Listener listener) {
        long declared = request.getLength();
        if (declared > Errors.BODY_LIMIT_BYTES) {
            listener.onError(Errors.payloadTooLarge());
            return;
        }
        if (declared == 0) {
            listener.onBody(EMPTY);
            return;
        }
        new BodyReader(request, listener, declared).readAvailable();
    }

    /** Jetty's read/demand loop: consume every chunk there is; when there is none, demand and return. */
    private void readAvailable() {
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(this::readAvailable);
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                Throwable failure = chunk.getFailure();
                if (failure instanceof TimeoutException) {
                    // Jetty's idle timeout (30 s without a byte) while the body was awaited.
                    listener.onError(Errors.requestTimeout());
                } else {
                    listener.onAbort(failure);
                }
                return;
            }
            boolean tooLarge = append(chunk.getByteBuffer());
            boolean last = chunk.isLast();
            chunk.release();
            if (tooLarge) {
                listener.onError(Errors.payloadTooLarge());
                return;
            }
            if (last) {
                listener.onBody(size == buffer.length ? buffer : Arrays.copyOf(buffer, size));
                return;
            }
        }
    }

    /** Copies the chunk's bytes; true as soon as the body passed the limit (nothing past it is kept). */
    private boolean append(ByteBuffer bytes) {
        int n = bytes.remaining();
        if ((long) size + n > Errors.BODY_LIMIT_BYTES) {
            return true;
        }
        if (size + n > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.min(Math.max(buffer.length * 2, size + n), Errors.BODY_LIMIT_BYTES));
        }
        bytes.get(buffer, size, n);
        size += n;
        return false;
    }
}

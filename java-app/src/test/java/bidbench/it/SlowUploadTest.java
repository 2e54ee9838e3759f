package bidbench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue #31: about 31 connections that sent a POST's headers and part of its body, then held, took
 * every thread of the 32-thread pool (a blocking body read parks its thread) and froze the app for
 * everyone. The body is now read with Jetty's demand callbacks, so held uploads hold no thread: with
 * more of them than the pool has threads, other clients are served, and a held upload that finishes
 * its body gets its answer.
 */
class SlowUploadTest {

    private static final int HELD = 80; // well above JAVA_THREADS (32)
    private static final String BODY = "{\"x\":\"" + "a".repeat(92) + "\"}"; // 100 bytes, refused before any SQL

    @Test
    void heldUploadsDoNotStarveOtherClients() throws Exception {
        int port = TestApp.port();
        byte[] head = ("POST /items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        assertEquals(100, body.length);
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < HELD; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write(head);
                if (i % 2 == 0) {
                    out.write(body, 0, 6); // 6 of 100 bytes, or (every other one) none
                }
                out.flush();
                held.add(socket);
            }
            // Every other client is still served, at once (RawHttp times out after 30 s: a frozen app fails).
            for (int i = 0; i < 10; i++) {
                RawHttp.Response response = RawHttp.send(port, RawHttp.request("GET", "/health", null, null));
                assertEquals(200, response.status());
            }
            // A held upload that completes its body gets the contract's answer (step 7.4), not a 500.
            Socket first = held.get(0);
            first.getOutputStream().write(body, 6, body.length - 6);
            first.getOutputStream().flush();
            RawHttp.Response answer = RawHttp.read(first.getInputStream());
            Wire.expectError(answer, 400, "bad_request", "request body has unknown fields");
        } finally {
            for (Socket socket : held) {
                socket.close();
            }
        }
    }
}

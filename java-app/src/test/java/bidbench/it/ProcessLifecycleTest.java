package bidbench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The app as the harness runs it, in its own JVM: exactly one start-up line on stdout with the
 * effective configuration (password masked), and on SIGTERM an in-flight request still finishes,
 * then the process exits 0.
 */
class ProcessLifecycleTest {

    @Test
    void startupLineAndGracefulSigterm() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx128m", "-cp", classpath, "bidbench.Main");
        builder.environment().put("DATABASE_URL", TestDatabase.url());
        builder.environment().put("PORT", "0");
        builder.environment().put("DB_POOL_SIZE", "2");
        builder.environment().put("JAVA_THREADS", "12");
        builder.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process process = builder.start();
        try {
            BufferedReader stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line = stdout.readLine();
            assertTrue(line != null && line.startsWith("bidbench-start {"), "start-up line: " + line);
            JsonNode start = new ObjectMapper().readTree(line.substring("bidbench-start ".length()));
            List<String> keys = Wire.fields(start);
            assertEquals(List.of("impl", "host", "port", "db", "db_pool_size", "log_level", "server_timing", "java_threads"),
                    keys.subList(0, 8));
            assertTrue(keys.containsAll(List.of("java_version", "jvm_name", "max_heap_bytes", "gc", "jvm_args")), keys.toString());
            assertEquals("java", start.get("impl").asText());
            assertEquals(2, start.get("db_pool_size").asInt());
            assertEquals(12, start.get("java_threads").asInt());
            assertEquals(128L * 1024 * 1024, start.get("max_heap_bytes").asLong());
            String password = TestDatabase.target().password();
            assertTrue(password == null || !line.contains(":" + password + "@"), "password masked");
            assertTrue(password == null || start.get("db").asText().contains(":***@"), start.get("db").asText());
            int port = start.get("port").asInt();

            for (int i = 0; i < 20; i++) {
                // Warm up, so that the in-flight request below is surely inside the handler when SIGTERM
                // arrives; one that is not yet dispatched is refused with 503 by the graceful stop.
                RawHttp.json(port, "POST", "/users", "{}");
            }

            // An in-flight request: headers and half a chunked body now, the rest after SIGTERM.
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                socket.setSoTimeout(15_000);
                OutputStream out = socket.getOutputStream();
                out.write(("POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"nic\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                Thread.sleep(500);
                process.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our end of stdout
                Thread.sleep(500);
                out.write("6\r\nkname\"\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                RawHttp.Response response = RawHttp.read(socket.getInputStream());
                assertEquals(400, response.status(), response.text());
                assertEquals("{\"error\":{\"code\":\"bad_request\",\"message\":\"request body is not valid JSON\"}}",
                        response.text());
            }
            // Blocks until the process closes stdout, that is, until it exits.
            assertEquals(null, stdout.readLine(), "exactly one line on stdout");
            assertTrue(process.waitFor(15, TimeUnit.SECONDS), "stopped within the stop timeout");
            assertEquals(0, process.exitValue(), "exit status after SIGTERM");
        } finally {
            process.destroyForcibly();
        }
    }
}

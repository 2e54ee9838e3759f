package bidbench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.config.DbTarget;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The app as the harness runs it, in its own JVM: exactly one start-up line on stdout with the
 * effective configuration (password masked), and on SIGTERM a request that is still waiting for the
 * database finishes normally, then the process exits 0.
 */
class ProcessLifecycleTest {

    @Test
    void startupLineAndGracefulSigterm() throws Exception {
        DbTarget db = TestDatabase.target();
        try (TcpProxy proxy = new TcpProxy(db.host(), db.port())) {
            proxy.up();
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            ProcessBuilder builder = new ProcessBuilder(java, "-Xmx128m", "-cp", classpath, "bidbench.Main");
            builder.environment().put("DATABASE_URL", "postgresql://" + db.user() + ":"
                    + (db.password() == null ? "" : db.password()) + "@127.0.0.1:" + proxy.port() + "/" + db.database());
            builder.environment().put("PORT", "0");
            builder.environment().put("DB_POOL_SIZE", "2");
            builder.environment().put("JAVA_THREADS", "12");
            builder.redirectError(new File("target/lifecycle-stderr.log"));
            Process process = builder.start();
            try {
                BufferedReader stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                String line = stdout.readLine();
                assertTrue(line != null && line.startsWith("bidbench-start {"), "start-up line: " + line);
                JsonNode start = new ObjectMapper().readTree(line.substring("bidbench-start ".length()));
                List<String> keys = Wire.fields(start);
                assertEquals(List.of("impl", "host", "port", "db", "db_pool_size", "log_level", "server_timing",
                        "java_threads"), keys.subList(0, 8));
                assertTrue(keys.containsAll(List.of("java_version", "jvm_name", "max_heap_bytes", "gc", "jvm_args")),
                        keys.toString());
                assertEquals("java", start.get("impl").asText());
                assertEquals(2, start.get("db_pool_size").asInt());
                assertEquals(12, start.get("java_threads").asInt());
                assertEquals("hikari", start.get("java_pool").asText());
                // The deliberately unequal variants, last and in this order, off unless asked for.
                assertEquals(List.of("unfair_unsorted", "unfair_per_field"), keys.subList(keys.size() - 2, keys.size()));
                assertTrue(start.get("unfair_unsorted").isBoolean() && !start.get("unfair_unsorted").asBoolean());
                assertTrue(start.get("unfair_per_field").isBoolean() && !start.get("unfair_per_field").asBoolean());
                assertEquals(128L * 1024 * 1024, start.get("max_heap_bytes").asLong());
                if (db.password() != null && !db.password().isEmpty()) {
                    assertTrue(!line.contains(":" + db.password() + "@"), "password masked");
                    assertTrue(start.get("db").asText().contains(":***@"), start.get("db").asText());
                }
                int port = start.get("port").asInt();
                Wire.expect(RawHttp.get(port, "/users/1"), 200);

                // In flight when SIGTERM arrives: the database takes 1.5 s to answer it.
                proxy.delayAnswers(1_500);
                CompletableFuture<RawHttp.Response> inFlight = CompletableFuture.supplyAsync(() -> {
                    try {
                        return RawHttp.get(port, "/users/1");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(500);
                process.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our end of stdout
                RawHttp.Response response = inFlight.get(15, TimeUnit.SECONDS);
                assertEquals(200, response.status(), response.text());
                assertTrue(response.text().startsWith("{\"id\":1,"), response.text());

                // Blocks until the process closes stdout, that is, until it exits.
                assertEquals(null, stdout.readLine(), "exactly one line on stdout");
                assertTrue(process.waitFor(15, TimeUnit.SECONDS), "stopped within the stop timeout");
                assertEquals(0, process.exitValue(), "exit status after SIGTERM");
            } finally {
                process.destroyForcibly();
            }
        }
    }
}

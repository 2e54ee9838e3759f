package bidbench;

import bidbench.config.Config;
import bidbench.json.JsonOutput;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.RuntimeMXBean;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.util.Jetty;

/**
 * {@code bidbench-start {json}}: the effective configuration, for the run manifest. The JVM facts
 * (version, heap, collector, flags) are read from the running JVM, not from what was asked for.
 */
final class StartupLine {

    static final String PREFIX = "bidbench-start ";

    private StartupLine() {}

    static String render(Config config, App app) {
        RuntimeMXBean runtime = ManagementFactory.getRuntimeMXBean();
        byte[] json = JsonOutput.bytes(out -> {
            out.writeStartObject();
            out.writeStringField("impl", "java");
            out.writeStringField("host", config.host());
            out.writeNumberField("port", app.port());
            out.writeStringField("db", config.db().masked());
            out.writeNumberField("db_pool_size", config.dbPoolSize());
            out.writeStringField("log_level", config.logLevel());
            out.writeBooleanField("server_timing", config.serverTiming());
            out.writeNumberField("java_threads", config.javaThreads());
            out.writeStringField("java_pool", config.javaPool().value());
            out.writeNumberField("jetty_acceptors", app.acceptors());
            out.writeNumberField("jetty_selectors", app.selectors());
            out.writeStringField("java_version", Runtime.version().toString());
            out.writeStringField("java_vendor", System.getProperty("java.vendor"));
            out.writeStringField("jvm_name", runtime.getVmName());
            out.writeStringField("jvm_version", runtime.getVmVersion());
            out.writeNumberField("max_heap_bytes", Runtime.getRuntime().maxMemory());
            out.writeArrayFieldStart("gc");
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                out.writeString(gc.getName());
            }
            out.writeEndArray();
            out.writeArrayFieldStart("jvm_args");
            for (String arg : runtime.getInputArguments()) {
                out.writeString(arg);
            }
            out.writeEndArray();
            out.writeNumberField("available_processors", Runtime.getRuntime().availableProcessors());
            out.writeStringField("jetty_version", Jetty.VERSION);
            out.writeBooleanField("unfair_unsorted", config.unfairUnsorted());
            out.writeBooleanField("unfair_per_field", config.unfairPerField());
            out.writeEndObject();
        });
        return PREFIX + new String(json, StandardCharsets.UTF_8);
    }
}

package bidbench;

import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;

/**
 * LOG_LEVEL for Logback (src/main/resources/logback.xml). The level goes in as system properties,
 * so this must run before the first logger is created. Libraries (Jetty, the pools, pgjdbc) log at
 * warn at most: debug means the app's own per-request and per-statement lines, not Jetty's internals.
 */
final class Logging {

    private Logging() {}

    static void configure(String level) {
        System.setProperty("bidbench.log.level", level);
        System.setProperty("bidbench.lib.level", level.equals("error") ? "error" : "warn");
    }

    /** Flushes and stops the appenders; the last thing before the JVM halts. */
    static void stop() {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            context.stop();
        }
    }
}

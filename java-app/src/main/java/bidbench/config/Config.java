package bidbench.config;

import java.util.Locale;
import java.util.Map;

/** The effective configuration, read from the environment variables of contract/README.md. */
public record Config(
        String host,
        int port,
        DbTarget db,
        int dbPoolSize,
        int javaThreads,
        JavaPool javaPool,
        String logLevel,
        boolean serverTiming,
        boolean unfairUnsorted,
        boolean unfairPerField) {

    public static Config fromEnv(Map<String, String> env) {
        return new Config(
                value(env, "HOST", "127.0.0.1"),
                DbTarget.port(value(env, "PORT", "8080"), "PORT"),
                DbTarget.fromEnv(env),
                positive(env, "DB_POOL_SIZE", 10),
                positive(env, "JAVA_THREADS", 32),
                JavaPool.parse(value(env, "JAVA_POOL", JavaPool.HIKARI.value())),
                logLevel(value(env, "LOG_LEVEL", "info")),
                flag(env, "SERVER_TIMING", true),
                flag(env, "BIDBENCH_UNFAIR_UNSORTED", false),
                flag(env, "BIDBENCH_UNFAIR_PER_FIELD", false));
    }

    /** A copy on another port; tests start the app on port 0. */
    public Config withPort(int newPort) {
        return new Config(host, newPort, db, dbPoolSize, javaThreads, javaPool, logLevel, serverTiming, unfairUnsorted,
                unfairPerField);
    }

    private static String value(Map<String, String> env, String name, String fallback) {
        String value = env.get(name);
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    private static int positive(Map<String, String> env, String name, int fallback) {
        String value = value(env, name, Integer.toString(fallback));
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + " must be a positive integer, got '" + value + "'");
    }

    private static boolean flag(Map<String, String> env, String name, boolean fallback) {
        String value = value(env, name, fallback ? "1" : "0");
        return switch (value) {
            case "1" -> true;
            case "0" -> false;
            default -> throw new IllegalArgumentException(name + " must be 0 or 1, got '" + value + "'");
        };
    }

    private static String logLevel(String value) {
        String level = value.toLowerCase(Locale.ROOT);
        return switch (level) {
            case "error", "warn", "info", "debug" -> level;
            default -> throw new IllegalArgumentException(
                    "LOG_LEVEL must be error, warn, info or debug, got '" + value + "'");
        };
    }
}

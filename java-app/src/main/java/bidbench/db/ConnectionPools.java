package bidbench.db;

import bidbench.config.Config;
import java.util.Map;

/** Opens the {@link ConnectionPool} that {@code JAVA_POOL} names, with the same driver settings for each. */
public final class ConnectionPools {

    /** The contract's pool checkout timeout: after it a request gets 503 database unavailable. */
    public static final long CHECKOUT_TIMEOUT_MS = 5_000;

    /**
     * HikariCP's connectionTimeout: one attempt of a request's checkout, repeated within its 5 s budget
     * (see {@link Database#open}). HikariCP waits its whole connectionTimeout for its background thread
     * even while every connect is refused, so a single 5 s attempt made each request that met a dead
     * database wait 5 s, where Node and PHP are refused in milliseconds. 500 ms rather than HikariCP's
     * 250 ms floor because it also caps the validation of a new connection.
     */
    static final long ATTEMPT_TIMEOUT_MS = 500;

    /** The name PostgreSQL shows in pg_stat_activity for every connection of this app. */
    static final String APPLICATION_NAME = "bidbench-java";

    private ConnectionPools() {}

    public static ConnectionPool open(Config config) {
        return switch (config.javaPool()) {
            case HIKARI -> HikariPool.open(config);
            case DRIVER -> DriverPool.open(config);
            case DBCP2 -> Dbcp2Pool.open(config);
        };
    }

    /**
     * pgjdbc properties every library passes to the driver, so the knob changes nothing but the pool:
     * the application name; a 5 s bound on a connection attempt to a host that does not answer (seconds,
     * pgjdbc's unit); and {@code assumeMinServerVersion}, which puts the session settings into the
     * start-up packet instead of a {@code SET application_name} statement after every connect. A pool
     * connects once, but the unpooled driver connects per request, and that statement would be database
     * work the other apps do not do (docs/design.md §3.2).
     */
    static Map<String, String> driverProperties() {
        return Map.of(
                "ApplicationName", APPLICATION_NAME,
                "connectTimeout", "5",
                "assumeMinServerVersion", "9.0");
    }
}

package bidbench.config;

import java.util.Locale;

/**
 * {@code JAVA_POOL}: which library hands out database connections (thesis §6.2 compared them). Every
 * choice holds at most {@code DB_POOL_SIZE} connections and waits at most the contract's 5 s for one,
 * so the knob changes the library, not the connection limit.
 */
public enum JavaPool {
    /** HikariCP, the default: a fixed pool of DB_POOL_SIZE connections. */
    HIKARI("hikari"),
    /** pgjdbc's own PGSimpleDataSource: no pool, a new physical connection per request (at most DB_POOL_SIZE at once). */
    DRIVER("driver"),
    /** Apache commons-dbcp2's BasicDataSource: a fixed pool of DB_POOL_SIZE connections. */
    DBCP2("dbcp2");

    private final String value;

    JavaPool(String value) {
        this.value = value;
    }

    /** The knob's spelling: {@code hikari}, {@code driver} or {@code dbcp2}. */
    public String value() {
        return value;
    }

    public static JavaPool parse(String raw) {
        String wanted = raw.trim().toLowerCase(Locale.ROOT);
        for (JavaPool pool : values()) {
            if (pool.value.equals(wanted)) {
                return pool;
            }
        }
        throw new IllegalArgumentException("JAVA_POOL must be hikari, driver or dbcp2, got '" + raw + "'");
    }
}
